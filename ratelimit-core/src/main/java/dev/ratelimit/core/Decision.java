package dev.ratelimit.core;

import java.time.Duration;

/**
 * The answer of a store to one request under one policy. Times are exact nanoseconds, never rounded to
 * seconds: that is left to whoever writes them into a response.
 *
 * @param allowed whether the request may proceed
 * @param limit the policy's limit
 * @param remaining permits that could still be taken right now
 * @param retryAfterNanos when denied, the shortest wait after which the same request would be allowed; 0 when
 * allowed
 * @param resetAfterNanos time until the key is back to its full quota
 * @param delayNanos leaky bucket: how long an admitted request must wait for its slot; 0 otherwise
 */
public record Decision(boolean allowed, long limit, long remaining, long retryAfterNanos, long resetAfterNanos,
		long delayNanos) {

	/**
	 * Returns {@link #retryAfterNanos()} as a duration.
	 * @return the wait before retrying
	 */
	public Duration retryAfter() {
		return Duration.ofNanos(this.retryAfterNanos);
	}

	/**
	 * Returns {@link #resetAfterNanos()} as a duration.
	 * @return the time until the quota is full
	 */
	public Duration resetAfter() {
		return Duration.ofNanos(this.resetAfterNanos);
	}

	/**
	 * Returns {@link #delayNanos()} as a duration.
	 * @return how long an admitted request must wait
	 */
	public Duration delay() {
		return Duration.ofNanos(this.delayNanos);
	}

}
