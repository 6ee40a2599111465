package dev.ratelimit.core;

import java.time.Duration;
import java.time.Instant;
import java.util.PriorityQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A {@link TimeSource} that only moves when told to, for tests and for replaying recorded traffic. A wait on it
 * ends when the source is moved past its end, by the thread that moves it.
 */
public final class ManualTimeSource implements TimeSource {

	private final AtomicLong nanos;

	/** The waits under way, the soonest first; guarded by itself. */
	private final PriorityQueue<Wait> waits = new PriorityQueue<>();

	/**
	 * Creates a time source standing at zero.
	 */
	public ManualTimeSource() {
		this(0);
	}

	/**
	 * Creates a time source standing at the given calendar instant.
	 * @param instant the initial instant, from which {@link #nanoTime()} counts nanoseconds since the Unix epoch
	 */
	public ManualTimeSource(Instant instant) {
		this(instant.getEpochSecond() * 1_000_000_000L + instant.getNano());
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
	 * Returns the instant of this source's nanoseconds counted from the Unix epoch, as the Redis store counts a
	 * time source's: {@code new ManualTimeSource(instant)} stands at {@code instant}.
	 * @return the current instant
	 */
	@Override
	public Instant instant() {
		return Instant.EPOCH.plusNanos(this.nanos.get());
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
		endWaits();
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
		endWaits();
		return this;
	}

	/**
	 * Blocks the calling thread until this source has been moved {@code nanos} nanoseconds on.
	 * @param nanos how long to wait; nothing is waited for if not positive
	 * @throws InterruptedException if the thread is interrupted while it waits
	 */
	@Override
	public void sleep(long nanos) throws InterruptedException {
		try {
			after(nanos).get();
		}
		catch (ExecutionException ex) {
			throw new IllegalStateException("A wait cannot fail", ex);
		}
	}

	/**
	 * Returns a future completed once this source has been moved {@code nanos} nanoseconds on.
	 * @param nanos how long to wait; the future is complete at once if not positive
	 * @return the future
	 */
	@Override
	public CompletableFuture<Void> after(long nanos) {
		if (nanos <= 0) {
			return CompletableFuture.completedFuture(null);
		}
		Wait wait = new Wait(this.nanos.get() + nanos, new CompletableFuture<>());
		synchronized (this.waits) {
			this.waits.add(wait);
		}
		// the source may have moved before the wait was in the queue
		endWaits();
		return wait.done;
	}

	/**
	 * Returns how many waits are under way: calls of {@link #sleep} and {@link #after} that this source has not
	 * been moved far enough to end, so that a test knows the code it drives has come to wait.
	 * @return the waits under way
	 */
	public int waits() {
		synchronized (this.waits) {
			return this.waits.size();
		}
	}

	/** Ends the waits whose end this source has reached, outside the lock. */
	private void endWaits() {
		long now = this.nanos.get();
		while (true) {
			Wait ended;
			synchronized (this.waits) {
				Wait soonest = this.waits.peek();
				if (soonest == null || soonest.until - now > 0) {
					return;
				}
				ended = this.waits.poll();
			}
			ended.done.complete(null);
		}
	}

	private record Wait(long until, CompletableFuture<Void> done) implements Comparable<Wait> {

		@Override
		public int compareTo(Wait other) {
			return Long.compare(this.until - other.until, 0);
		}

	}

}
