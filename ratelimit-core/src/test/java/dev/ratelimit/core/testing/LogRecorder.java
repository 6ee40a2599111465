package dev.ratelimit.core.testing;

import java.io.PrintStream;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.List;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/**
 * Records what one logger writes while a test runs, and keeps it out of the test's output: how many lines, how
 * many of them carry a stack trace, and how many at each level. {@link #close()} gives the logger back its
 * level and its parents' handlers.
 * <p>
 * The core logs through {@link System#getLogger}, which ends in {@code java.util.logging} when no other
 * {@link System.LoggerFinder} is installed, as in the core's and the starter's tests: the recorder listens there,
 * at every level.
 */
public final class LogRecorder implements AutoCloseable {

	private final Logger logger;

	private final java.util.logging.Level previousLevel;

	private final boolean previousUseParentHandlers;

	private final Recording recording = new Recording();

	private LogRecorder(Logger logger) {
		this.logger = logger;
		this.previousLevel = logger.getLevel();
		this.previousUseParentHandlers = logger.getUseParentHandlers();
		logger.setLevel(java.util.logging.Level.ALL);
		logger.setUseParentHandlers(false);
		logger.addHandler(this.recording);
	}

	/**
	 * Starts recording what the named logger writes.
	 * @param loggerName the name given to {@link System#getLogger}, usually a class name
	 * @return the recorder, to close when the test is done
	 */
	public static LogRecorder record(String loggerName) {
		return new LogRecorder(Logger.getLogger(loggerName));
	}

	/**
	 * Returns how many lines the logger wrote.
	 * @return the number of lines
	 */
	public int lines() {
		return this.recording.lines().size();
	}

	/**
	 * Returns how many lines the logger wrote at one level.
	 * @param level the level, as the logger was called with it
	 * @return the number of lines at that level
	 */
	public int lines(Level level) {
		return (int) this.recording.lines().stream().filter((line) -> level(line) == level).count();
	}

	/**
	 * Returns how many lines carried a stack trace.
	 * @return the number of lines with a throwable
	 */
	public int linesWithStackTrace() {
		return (int) this.recording.lines().stream().filter((line) -> line.getThrown() != null).count();
	}

	/**
	 * Returns the messages written so far, oldest first, without their stack traces.
	 * @return the messages
	 */
	public List<String> messages() {
		return this.recording.lines().stream().map(LogRecord::getMessage).toList();
	}

	/**
	 * Prints every line recorded so far, with its level and stack trace, as the test output would have shown it.
	 * @param out where to print
	 */
	public void print(PrintStream out) {
		for (LogRecord line : this.recording.lines()) {
			out.println(line.getLevel() + ": " + line.getMessage());
			if (line.getThrown() != null) {
				line.getThrown().printStackTrace(out);
			}
		}
	}

	/** The {@code System.Logger} level that {@code java.util.logging} received as this record's level. */
	private static Level level(LogRecord record) {
		int value = record.getLevel().intValue();
		if (value >= java.util.logging.Level.SEVERE.intValue()) {
			return Level.ERROR;
		}
		if (value >= java.util.logging.Level.WARNING.intValue()) {
			return Level.WARNING;
		}
		if (value >= java.util.logging.Level.INFO.intValue()) {
			return Level.INFO;
		}
		return (value >= java.util.logging.Level.FINE.intValue()) ? Level.DEBUG : Level.TRACE;
	}

	@Override
	public void close() {
		this.logger.removeHandler(this.recording);
		this.logger.setUseParentHandlers(this.previousUseParentHandlers);
		this.logger.setLevel(this.previousLevel);
	}

	/** Keeps every record it is handed; loggers call it from any thread. */
	private static final class Recording extends Handler {

		private final List<LogRecord> records = new ArrayList<>();

		@Override
		public synchronized void publish(LogRecord record) {
			this.records.add(record);
		}

		synchronized List<LogRecord> lines() {
			return List.copyOf(this.records);
		}

		@Override
		public void flush() {
		}

		@Override
		public void close() {
		}

	}

}
