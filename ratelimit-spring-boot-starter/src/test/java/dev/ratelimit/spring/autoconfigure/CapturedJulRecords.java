package dev.ratelimit.spring.autoconfigure;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/**
 * Collects what one {@code java.util.logging} logger logs, instead of printing it, until closed: the core logs
 * through {@link System.Logger}, which the JDK sends there outside a Spring Boot application.
 */
final class CapturedJulRecords implements AutoCloseable {

	/** Held strongly: the logging framework keeps loggers only weakly, and would drop the handler. */
	private final Logger logger;

	private final boolean useParentHandlers;

	private final List<LogRecord> records = new CopyOnWriteArrayList<>();

	private final Handler handler = new Handler() {

		@Override
		public void publish(LogRecord record) {
			CapturedJulRecords.this.records.add(record);
		}

		@Override
		public void flush() {
		}

		@Override
		public void close() {
		}

	};

	CapturedJulRecords(String loggerName) {
		this.logger = Logger.getLogger(loggerName);
		this.useParentHandlers = this.logger.getUseParentHandlers();
		this.logger.addHandler(this.handler);
		this.logger.setUseParentHandlers(false);
	}

	List<LogRecord> records() {
		return this.records;
	}

	@Override
	public void close() {
		this.logger.removeHandler(this.handler);
		this.logger.setUseParentHandlers(this.useParentHandlers);
	}

}
