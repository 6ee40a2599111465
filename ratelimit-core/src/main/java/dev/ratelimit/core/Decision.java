package dev.ratelimit.core;

import java.time.Duration;
import java.util.Objects;

import org.jspecify.annotations.Nullable;

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
 * @param delayNanos how long an admitted request must wait: for its slot in a leaky bucket, for the permits it
 * reserved under a policy whose requests may wait ({@link RateLimitPolicy#maxWait()}); 0 otherwise
 * @param takenAt when the store allowed the request from its own state, the instant it took the permits at, in
 * the store's own microseconds, which {@link RateLimitStore#giveBack} needs to find them again; {@link #NOT_TAKEN}
 * otherwise. Two decisions that say the same are equal whenever they were taken.
 */
public record Decision(boolean allowed, long limit, long remaining, long retryAfterNanos, long resetAfterNanos,
		long delayNanos, long takenAt) {

	/** The {@link #takenAt()} of a decision that took nothing from a store's state. */
	public static final long NOT_TAKEN = Long.MIN_VALUE;

	/**
	 * Creates a decision that took nothing from a store's state, such as a denial or a failure policy's answer.
	 * @param allowed whether the request may proceed
	 * @param limit the policy's limit
	 * @param remaining permits that could still be taken right now
	 * @param retryAfterNanos when denied, the shortest wait after which the same request would be allowed
	 * @param resetAfterNanos time until the key is back to its full quota
	 * @param delayNanos how long an admitted request must wait, for its slot or for the permits it reserved
	 */
	public Decision(boolean allowed, long limit, long remaining, long retryAfterNanos, long resetAfterNanos,
			long delayNanos) {
		this(allowed, limit, remaining, retryAfterNanos, resetAfterNanos, delayNanos, NOT_TAKEN);
	}

	/**
	 * Returns whether this decision took permits from a store's state, which
	 * {@link RateLimitStore#giveBack} can give back.
	 * @return whether the request was allowed and taken
	 */
	public boolean taken() {
		return this.allowed && this.takenAt != NOT_TAKEN;
	}

	/**
	 * Compares what the decisions say, not when they were taken: a store deciding at another instant, or in
	 * another clock, says the same.
	 */
	@Override
	public boolean equals(@Nullable Object other) {
		return (this == other) || (other instanceof Decision that && this.allowed == that.allowed
				&& this.limit == that.limit && this.remaining == that.remaining
				&& this.retryAfterNanos == that.retryAfterNanos && this.resetAfterNanos == that.resetAfterNanos
				&& this.delayNanos == that.delayNanos);
	}

	@Override
	public int hashCode() {
		return Objects.hash(this.allowed, this.limit, this.remaining, this.retryAfterNanos, this.resetAfterNanos,
				this.delayNanos);
	}

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
