package dev.ratelimit.core;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;

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
	 * Decides one request against several limits at once, as when an endpoint carries stacked limits: the
	 * request is allowed only if every limit allows it, and a request that any limit denies takes nothing from
	 * the others. The limits may differ in their keys.
	 * @param limits the limits, at least one, no two with the same key and policy name
	 * @return one decision per limit, in the order given; all allowed, or all denied
	 */
	List<Decision> decideAll(List<KeyedPolicy> limits);

	/**
	 * Decides one request of {@code key} against several policies at once, as {@link #decideAll(List)} does
	 * with every policy on that key.
	 * @param key who is limited
	 * @param policies the policies, at least one, with distinct names
	 * @return one decision per policy, in the order given; all allowed, or all denied
	 */
	default List<Decision> decideAll(String key, List<RateLimitPolicy> policies) {
		List<KeyedPolicy> limits = new ArrayList<>(policies.size());
		for (RateLimitPolicy policy : policies) {
			limits.add(new KeyedPolicy(key, policy));
		}
		return decideAll(limits);
	}

	/**
	 * Gives back the permits that an allowed request took, as if it had taken less or nothing: for a request
	 * whose outcome should not count. Afterwards each key is never more lenient than if the request had never
	 * been taken, and may be stricter: a bucket's instant moves back by the cost but never before now, a window
	 * gives the permits back only while the window they were taken in still counts, and a sliding log drops
	 * the request's own entries. Denied decisions, and decisions made without the store's state (a failure
	 * policy's), give back nothing. The limits are given back at once, as they were taken.
	 * @param limits the limits the request was decided against
	 * @param decisions the decisions the store returned for them, in the same order
	 */
	void giveBack(List<KeyedPolicy> limits, List<Decision> decisions);

	/**
	 * Checks that {@code limits} can be decided together: at least one, and no key with two policies of one
	 * name, since a store tells a key's states apart by the policy's name.
	 * @param limits the limits of one request
	 * @throws IllegalArgumentException naming the repeated limit
	 */
	static void checkStack(List<KeyedPolicy> limits) {
		if (limits.isEmpty()) {
			throw new IllegalArgumentException("At least one policy is needed to decide a request");
		}
		if (limits.size() == 1) {
			return;
		}
		HashSet<Map.Entry<String, String>> seen = new HashSet<>();
		for (KeyedPolicy limit : limits) {
			if (!seen.add(Map.entry(limit.key(), limit.policy().name()))) {
				throw new IllegalArgumentException("Stacked policies must have distinct names, '"
						+ limit.policy().name() + "' appears twice on key '" + limit.key() + "'");
			}
		}
	}

	/**
	 * Checks that {@code decisions} can be given back for {@code limits}: limits that {@link #checkStack} accepts,
	 * and one decision each.
	 * @param limits the limits of one request
	 * @param decisions the decisions the store returned for them
	 * @throws IllegalArgumentException naming what does not match
	 */
	static void checkGiveBack(List<KeyedPolicy> limits, List<Decision> decisions) {
		checkStack(limits);
		if (decisions.size() != limits.size()) {
			throw new IllegalArgumentException("Expected one decision per limit, " + limits.size() + ", got "
					+ decisions.size());
		}
	}

}
