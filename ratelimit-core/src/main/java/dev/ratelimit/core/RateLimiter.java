package dev.ratelimit.core;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;

/**
 * Decides requests of any number of keys under one {@link RateLimitPolicy}. Obtained from a
 * {@link RateLimitStore}; thread-safe.
 */
public interface RateLimiter {

	/**
	 * Returns the policy this limiter enforces.
	 * @return the policy
	 */
	RateLimitPolicy policy();

	/**
	 * Decides one request of {@code key}, taking the policy's cost from the key's quota if it is allowed.
	 * @param key who is limited, such as a client address or a user name
	 * @return the decision
	 */
	Decision decide(String key);

	/**
	 * Decides one request of {@code key} like {@link #decide(String)}, reporting only whether it is allowed.
	 * @param key who is limited
	 * @return whether the request is allowed
	 */
	boolean tryAcquire(String key);

	/**
	 * Decides one request of {@code key} that takes {@code permits} from the key's quota instead of the policy's
	 * cost, from the same quota as every other request of the key.
	 * @param key who is limited
	 * @param permits how many permits the request takes
	 * @return the decision
	 * @throws IllegalArgumentException if {@code permits} is less than 1 or more than the policy can ever hold
	 */
	Decision decide(String key, long permits);

	/**
	 * Decides one request of {@code key} that takes {@code permits}, like {@link #decide(String, long)},
	 * reporting only whether it is allowed.
	 * @param key who is limited
	 * @param permits how many permits the request takes
	 * @return whether the request is allowed
	 * @throws IllegalArgumentException if {@code permits} is less than 1 or more than the policy can ever hold
	 */
	default boolean tryAcquire(String key, long permits) {
		return decide(key, permits).allowed();
	}

	/**
	 * Takes one request's permits of {@code key}, waiting up to {@code maxWait} for them rather than being
	 * refused: the permits are reserved at once, as {@link RateLimitPolicy#withMaxWait} says, and this returns
	 * once they are due, waiting on the store's {@link TimeSource}; if they would not be due within
	 * {@code maxWait}, it returns at once, denied, taking nothing. The requests that come while this one waits
	 * queue behind it, on every instance that shares the store. GCRA and the token bucket reserve; under the
	 * other algorithms only a wait of zero, a plain decision, is accepted, and a leaky bucket, which queues its
	 * requests itself, still has an admitted request wait for its slot, as it has every request.
	 * @param key who is limited
	 * @param maxWait how long the request may wait, at most the policy's window
	 * @return the decision: allowed, after its {@link Decision#delayNanos() delay} was waited for; or denied,
	 * with how long until the same call would be allowed
	 * @throws InterruptedException if the thread is interrupted while it waits; the permits stay taken
	 * @throws IllegalArgumentException if the algorithm cannot reserve, or {@code maxWait} is negative or longer
	 * than the window
	 */
	Decision acquire(String key, Duration maxWait) throws InterruptedException;

	/**
	 * Takes one request's permits of {@code key} like {@link #acquire(String, Duration)}, without blocking: the
	 * future completes once the permits are due, or at once when they are refused.
	 * @param key who is limited
	 * @param maxWait how long the request may wait, at most the policy's window
	 * @return the decision, once the permits are due or refused; failed with an {@link IllegalArgumentException}
	 * if the algorithm cannot reserve or {@code maxWait} is out of range
	 */
	CompletableFuture<Decision> acquireAsync(String key, Duration maxWait);

}
