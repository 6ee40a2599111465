package dev.ratelimit.core;

import java.time.Instant;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * A monotonic source of nanoseconds, the only way the stores learn what time it is, and the clock that a request
 * waiting for its permits waits on. Production code uses {@link #system()}; tests use a {@link ManualTimeSource}
 * and move it explicitly.
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
	 * Returns the instant on the calendar that this source stands at now, to which calendar windows are aligned.
	 * The default reads the system's clock; a source of its own time overrides it, as {@link ManualTimeSource}
	 * does.
	 * @return the current instant
	 */
	default Instant instant() {
		return Instant.now();
	}

	/**
	 * Blocks the calling thread until {@code nanos} nanoseconds have passed on this source.
	 * @param nanos how long to wait; nothing is waited for if not positive
	 * @throws InterruptedException if the thread is interrupted while it waits
	 */
	default void sleep(long nanos) throws InterruptedException {
		TimeUnit.NANOSECONDS.sleep(nanos);
	}

	/**
	 * Returns a future completed once {@code nanos} nanoseconds have passed on this source, holding no thread
	 * meanwhile.
	 * @param nanos how long to wait; the future is complete at once if not positive
	 * @return the future
	 */
	default CompletableFuture<Void> after(long nanos) {
		if (nanos <= 0) {
			return CompletableFuture.completedFuture(null);
		}
		return CompletableFuture.runAsync(() -> {
		}, CompletableFuture.delayedExecutor(nanos, TimeUnit.NANOSECONDS));
	}

	/**
	 * Returns the time source backed by {@link System#nanoTime()}.
	 * @return the system time source
	 */
	static TimeSource system() {
		return System::nanoTime;
	}

}
