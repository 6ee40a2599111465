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

}
