package dev.ratelimit.core;

/**
 * A monotonic source of nanoseconds, the only way the stores learn what time it is. Production code uses
 * {@link #system()}; tests use a {@link ManualTimeSource} and move it explicitly.
 */
@FunctionalInterface
public interface TimeSource {

	/**
	 * Returns the current value of this source, in nanoseconds. Only differences between two values are
	 * meaningful.
	 * @return the current time in nanoseconds
	 */
	long nanoTime();

	/**
	 * Returns the time source backed by {@link System#nanoTime()}.
	 * @return the system time source
	 */
	static TimeSource system() {
		return System::nanoTime;
	}

}
