package dev.ratelimit.benchmarks;

import java.time.Duration;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.RateLimitPolicy;

/**
 * The two loads every in-memory benchmark runs under. Every limiter, ours and each peer's, gets the same limit,
 * window and burst (burst = limit, as the window algorithms have no other).
 */
public enum Load {

	/**
	 * 100,000 permits per millisecond (10^8 per second), burst 100,000: far above what two cores can ask, so
	 * every call is allowed. The limit is the largest a sliding log takes; the millisecond window keeps its
	 * log, and so its memory, small.
	 */
	ALLOWED(100_000, Duration.ofMillis(1)),

	/** 100 permits per second, burst 100: after the first hundred, almost every call on a hot key is denied. */
	DENIED(100, Duration.ofSeconds(1));

	private final long limit;

	private final Duration window;

	Load(long limit, Duration window) {
		this.limit = limit;
		this.window = window;
	}

	/**
	 * Returns the policy of this load for one of our algorithms.
	 * @param algorithm the algorithm
	 * @return the policy
	 */
	public RateLimitPolicy policy(Algorithm algorithm) {
		return RateLimitPolicy.of("bench", algorithm, this.limit, this.window);
	}

	/**
	 * Returns the token bucket policy whose limit, window and burst every peer is configured to.
	 * @return the policy
	 */
	public RateLimitPolicy peerPolicy() {
		return policy(Algorithm.TOKEN_BUCKET);
	}

}
