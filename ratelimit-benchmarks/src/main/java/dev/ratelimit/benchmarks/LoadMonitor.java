package dev.ratelimit.benchmarks;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;

/**
 * The machine's 1-minute load average read every few seconds while the suite runs, so that each table can say how
 * busy the machine was while it was measured. The suite's own benchmarks raise it too: during a run it tells how
 * much else ran only by comparison with another run, while the reading before the run is the machine's alone.
 */
final class LoadMonitor implements AutoCloseable {

	private final Supplier<Machine.LoadAverage> source;

	private final Duration period;

	private final List<Double> readings = new ArrayList<>();

	private final @Nullable ScheduledExecutorService scheduler;

	private LoadMonitor(Supplier<Machine.LoadAverage> source, Duration period, boolean scheduled) {
		this.source = source;
		this.period = period;
		this.scheduler = scheduled ? Executors.newSingleThreadScheduledExecutor((task) -> {
			Thread thread = new Thread(task, "load-monitor");
			thread.setDaemon(true);
			return thread;
		}) : null;
	}

	/** Reads the load every {@code period} on a daemon thread until closed. */
	static LoadMonitor start(Supplier<Machine.LoadAverage> source, Duration period) {
		LoadMonitor monitor = new LoadMonitor(source, period, true);
		ScheduledExecutorService scheduler = monitor.scheduler;
		assert scheduler != null;
		scheduler.scheduleAtFixedRate(monitor::read, 0, period.toMillis(), TimeUnit.MILLISECONDS);
		return monitor;
	}

	/** A monitor that reads only when {@link #read()} is called, for tests. */
	static LoadMonitor manual(Supplier<Machine.LoadAverage> source, Duration period) {
		return new LoadMonitor(source, period, false);
	}

	/** Takes one reading. */
	synchronized void read() {
		this.readings.add(this.source.get().oneMinute());
	}

	/** Where the readings taken from now on begin. */
	synchronized Mark mark() {
		return new Mark(this.readings.size(), this.source.get());
	}

	/**
	 * Describes the load at a mark and over the readings taken since, such as {@code 1-minute load average 0.12
	 * at the start, 1.85 mean and 2.10 most over 12 readings 5 s apart}.
	 */
	synchronized String since(Mark mark) {
		List<Double> during = this.readings.subList(mark.readings, this.readings.size());
		String start = String.format(Locale.ROOT, "1-minute load average %.2f at the start", mark.load.oneMinute());
		if (during.isEmpty()) {
			return start + ", no reading during it";
		}
		return start + String.format(Locale.ROOT, ", %.2f mean and %.2f most over %d readings %d s apart during it",
				during.stream().mapToDouble(Double::doubleValue).average().getAsDouble(),
				during.stream().mapToDouble(Double::doubleValue).max().getAsDouble(), during.size(),
				this.period.toSeconds());
	}

	@Override
	public void close() {
		if (this.scheduler != null) {
			this.scheduler.shutdownNow();
		}
	}

	/**
	 * Where a stretch of readings begins.
	 * @param readings how many readings came before it
	 * @param load the load when it began
	 */
	record Mark(int readings, Machine.LoadAverage load) {
	}

}
