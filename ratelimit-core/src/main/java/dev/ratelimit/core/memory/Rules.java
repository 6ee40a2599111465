package dev.ratelimit.core.memory;

import java.math.BigInteger;

import dev.ratelimit.core.RateLimitPolicy;

/**
 * A policy turned into the integers its algorithm computes with. Time is in microseconds; the bucket
 * algorithms count in ticks of {@code 1 / scale} microsecond so that the emission interval
 * {@code window / limit} is a whole number of ticks and every decision is exact.
 */
final class Rules {

	final RateLimitPolicy policy;

	final long limit;

	final long window;

	final long burst;

	final long cost;

	final long delayAfter;

	/** Ticks per microsecond. */
	final long scale;

	/** The emission interval {@code window / limit}, in ticks. */
	final long interval;

	Rules(RateLimitPolicy policy) {
		this.policy = policy;
		this.limit = policy.limit();
		this.window = policy.windowMicros();
		this.burst = policy.burst();
		this.cost = policy.cost();
		this.delayAfter = policy.delayAfter();
		long gcd = BigInteger.valueOf(this.window).gcd(BigInteger.valueOf(this.limit)).longValue();
		this.scale = this.limit / gcd;
		this.interval = this.window / gcd;
	}

	KeyState newState() {
		return switch (this.policy.algorithm()) {
			case FIXED_WINDOW -> new FixedWindowState();
			case SLIDING_LOG -> new SlidingLogState();
			case SLIDING_WINDOW_COUNTER -> new SlidingWindowCounterState();
			case TOKEN_BUCKET, GCRA -> new ArrivalState();
			case LEAKY_BUCKET -> new LeakyBucketState();
		};
	}

	long microsToNanos(long micros) {
		return micros * 1000;
	}

	/** Rounds up, so that a wait is never reported shorter than it is. */
	long ticksToNanos(long ticks) {
		return (ticks <= 0) ? 0 : ceilDiv(ticks * 1000, this.scale);
	}

	static long ceilDiv(long dividend, long divisor) {
		return -Math.floorDiv(-dividend, divisor);
	}

}
