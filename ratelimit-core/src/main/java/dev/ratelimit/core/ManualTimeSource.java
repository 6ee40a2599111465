package dev.ratelimit.core;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A {@link TimeSource} that only moves when told to, for tests and for replaying recorded traffic.
 */
public final class ManualTimeSource implements TimeSource {

	private final AtomicLong nanos;

	/**
	 * Creates a time source standing at zero.
	 */
	public ManualTimeSource() {
		this(0);
	}

	/**
	 * Creates a time source standing at the given instant.
	 * @param nanos the initial time in nanoseconds
	 */
	public ManualTimeSource(long nanos) {
		this.nanos = new AtomicLong(nanos);
	}

	@Override
	public long nanoTime() {
		return this.nanos.get();
	}

	/**
	 * Moves this source forward.
	 * @param duration how far to move, not negative
	 * @return this source
	 */
	public ManualTimeSource advance(Duration duration) {
		if (duration.isNegative()) {
			throw new IllegalArgumentException("A monotonic time source cannot move back by " + duration);
		}
		this.nanos.addAndGet(duration.toNanos());
		return this;
	}

	/**
	 * Sets this source to an absolute value, which must not be earlier than its current one.
	 * @param nanos the new time in nanoseconds
	 * @return this source
	 */
	public ManualTimeSource set(long nanos) {
		long current = this.nanos.get();
		if (nanos < current) {
			throw new IllegalArgumentException(
					"A monotonic time source cannot move back from " + current + " ns to " + nanos + " ns");
		}
		this.nanos.set(nanos);
		return this;
	}

}
