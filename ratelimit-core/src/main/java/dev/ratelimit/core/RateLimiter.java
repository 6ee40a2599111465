package dev.ratelimit.core;

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

}
