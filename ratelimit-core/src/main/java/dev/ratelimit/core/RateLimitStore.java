package dev.ratelimit.core;

import java.util.List;

/**
 * Keeps the state of every key under every policy and decides requests against it: in memory for one
 * instance, in Redis for a fleet.
 */
public interface RateLimitStore {

	/**
	 * Returns a limiter enforcing {@code policy} on the keys of this store.
	 * @param policy the policy
	 * @return the limiter
	 */
	RateLimiter limiter(RateLimitPolicy policy);

	/**
	 * Decides one request of {@code key} against several policies at once, as when an endpoint carries
	 * stacked limits: the request is allowed only if every policy allows it, and a request that any policy
	 * denies takes nothing from the others.
	 * @param key who is limited
	 * @param policies the policies, at least one, with distinct names
	 * @return one decision per policy, in the order given; all allowed, or all denied
	 */
	List<Decision> decideAll(String key, List<RateLimitPolicy> policies);

}
