package dev.ratelimit.core.redis;

import dev.ratelimit.core.TimeSource;

/**
 * What Redis' clock reads, estimated from the heartbeats' replies, so that a call can carry the Redis
 * {@code TIME} at which its caller stops waiting: a script that Redis runs later (it was paused, hung, or the
 * call sat in a buffer) then changes nothing.
 * <p>
 * Each reply gives Redis' time when it ran the script, read here a little later: {@code redis - local} is at
 * most the true offset, so the largest recent estimate is the closest, and a deadline computed from it is never
 * later than the true one. Estimates older than two periods are forgotten, so that a step of Redis' clock is
 * followed within 20 s.
 */
final class RedisClock {

	private static final long PERIOD_NANOS = 10_000_000_000L;

	private static final long UNKNOWN = Long.MIN_VALUE;

	private final TimeSource local;

	private long periodStart;

	private long current = UNKNOWN;

	private long previous = UNKNOWN;

	/** {@code redis TIME - local / 1000}, in microseconds, or {@link #UNKNOWN}. */
	private volatile long offsetMicros = UNKNOWN;

	RedisClock(TimeSource local) {
		this.local = local;
	}

	long nanoTime() {
		return this.local.nanoTime();
	}

	/** Learns that Redis read {@code redisMicros} at most as late as the local {@code receivedNanos}. */
	synchronized void observe(long redisMicros, long receivedNanos) {
		long estimate = redisMicros - Math.floorDiv(receivedNanos, 1000);
		if (this.current == UNKNOWN || receivedNanos - this.periodStart >= PERIOD_NANOS) {
			this.previous = this.current;
			this.current = UNKNOWN;
			this.periodStart = receivedNanos;
		}
		this.current = Math.max(this.current, estimate);
		this.offsetMicros = Math.max(this.current, this.previous);
	}

	/**
	 * The Redis {@code TIME} in microseconds matching the local instant {@code localNanos}, as the scripts'
	 * deadline argument; empty while no heartbeat has told it.
	 */
	String redisTime(long localNanos) {
		long offset = this.offsetMicros;
		return (offset == UNKNOWN) ? "" : Long.toString(Math.floorDiv(localNanos, 1000) + offset);
	}

}
