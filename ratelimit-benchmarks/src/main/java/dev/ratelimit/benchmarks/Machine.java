package dev.ratelimit.benchmarks;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.function.Supplier;

/**
 * What the numbers were measured on, and how busy it was: a ratio between contenders is only comparable with
 * another when the machine's load is stated beside it, and a run on a busy machine is refused unless asked for.
 */
final class Machine {

	/**
	 * The most 1-minute load average per core at which a run starts: above it, other processes hold about half
	 * of every core on average, and a contender that allocates or parks more than another loses more to them, so
	 * that even in-round ratios move.
	 */
	static final double QUIET_PER_CORE = 0.5;

	private static final Path LOADAVG = Path.of("/proc/loadavg");

	private Machine() {
	}

	static String describe() {
		return cores() + " cores (nproc), " + cpuModel() + ", JDK " + System.getProperty("java.runtime.version") + " ("
				+ System.getProperty("java.vm.name") + ")";
	}

	static int cores() {
		return Runtime.getRuntime().availableProcessors();
	}

	/** The 1-minute load average above which a run is refused on this machine. */
	static double quietThreshold() {
		return QUIET_PER_CORE * cores();
	}

	/** Reads the kernel's load averages now. */
	static LoadAverage loadAverage() {
		try {
			return LoadAverage.parse(Files.readString(LOADAVG));
		}
		catch (IOException ex) {
			throw new UncheckedIOException("cannot read the load average from " + LOADAVG, ex);
		}
	}

	/**
	 * Reads the load average until its 1-minute figure is at most {@code threshold}, at most {@code readings}
	 * times, {@code pause} apart: the 1-minute figure decays by about a factor of e a minute once a build before
	 * the run has finished, so a short wait tells a machine that was busy from one that is.
	 * @return the last reading, quiet or not
	 */
	static LoadAverage awaitQuiet(Supplier<LoadAverage> source, double threshold, int readings, Duration pause,
			Pause pauser) throws InterruptedException {
		if (readings < 1) {
			throw new IllegalArgumentException("readings must be at least 1, not " + readings);
		}
		LoadAverage load = source.get();
		for (int i = 1; i < readings && load.oneMinute() > threshold; i++) {
			System.out.printf(Locale.ROOT, "load average %.2f is above %.2f: waiting %d s for the machine to quieten%n",
					load.oneMinute(), threshold, pause.toSeconds());
			pauser.pause(pause);
			load = source.get();
		}
		return load;
	}

	private static String cpuModel() {
		try {
			return Files.readAllLines(Path.of("/proc/cpuinfo"))
				.stream()
				.filter((line) -> line.startsWith("model name"))
				.map((line) -> line.substring(line.indexOf(':') + 1).trim())
				.findFirst()
				.orElse("unknown CPU");
		}
		catch (IOException ex) {
			return "unknown CPU";
		}
	}

	/** Waits between two readings; tests pass one that only records. */
	@FunctionalInterface
	interface Pause {

		void pause(Duration duration) throws InterruptedException;

	}

	/**
	 * The kernel's load averages over 1, 5 and 15 minutes: runnable and uninterruptible tasks, so a process of
	 * ours waiting for Redis counts as little as one of another's.
	 * @param oneMinute over the last minute
	 * @param fiveMinutes over the last five minutes
	 * @param fifteenMinutes over the last fifteen minutes
	 */
	record LoadAverage(double oneMinute, double fiveMinutes, double fifteenMinutes) {

		LoadAverage {
			if (!(oneMinute >= 0 && fiveMinutes >= 0 && fifteenMinutes >= 0)) {
				throw new IllegalArgumentException("a load average is a number of tasks, at least 0, not "
						+ oneMinute + ", " + fiveMinutes + ", " + fifteenMinutes);
			}
		}

		/** Reads the first three fields of {@code /proc/loadavg}, such as {@code 0.52 0.58 0.59 2/431 12345}. */
		static LoadAverage parse(String loadavg) {
			String[] fields = loadavg.trim().split("\\s+");
			try {
				return new LoadAverage(Double.parseDouble(fields[0]), Double.parseDouble(fields[1]),
						Double.parseDouble(fields[2]));
			}
			catch (NumberFormatException | ArrayIndexOutOfBoundsException ex) {
				throw new IllegalArgumentException("not a load average line: '" + loadavg.trim() + "'", ex);
			}
		}

		@Override
		public String toString() {
			return String.format(Locale.ROOT, "%.2f (1 min), %.2f (5 min), %.2f (15 min)", this.oneMinute,
					this.fiveMinutes, this.fifteenMinutes);
		}

	}

}
