package dev.ratelimit.core;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * Keeps the state of every key under every policy and decides requests against it: in memory for one
 * instance, in Redis for a fleet.
 */
public interface RateLimitStore {

	/**
	 * How many policies in a row a key can carry its permits over from, when a policy {@link #change changes}
	 * again before the keys of its earlier values are full: the newest ones.
	 */
	int MAX_CARRIED_CHANGES = 8;

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
	 * Decides one request against several limits as {@link #decideAll(List)} does, for a caller whose thread
	 * must not wait, such as a reactive server's event loop: a store that has to wait for a remote state
	 * returns at once and completes the stage when the state has answered, or when it gave up waiting and
	 * decided otherwise. Continuations must not block the thread that completes the stage, which may belong
	 * to the store's client. By default the store decides at once, on the calling thread, as stores that never
	 * wait do.
	 * @param limits the limits, at least one, no two with the same key and policy name
	 * @return a stage completing with one decision per limit, in the order given, all allowed or all denied;
	 * failed with what {@code decideAll} would throw, such as an {@link IllegalArgumentException} for limits
	 * it rejects
	 */
	default CompletionStage<List<Decision>> decideAllAsync(List<KeyedPolicy> limits) {
		try {
			return CompletableFuture.completedFuture(decideAll(limits));
		}
		catch (RuntimeException | Error ex) {
			return CompletableFuture.failedFuture(ex);
		}
	}

	/**
	 * Gives back the permits that an allowed request took as {@link #giveBack(List, List)} does, for a caller
	 * whose thread must not wait (see {@link #decideAllAsync(List)}). By default the store gives back at once,
	 * on the calling thread.
	 * @param limits the limits the request was decided against
	 * @param decisions the decisions the store returned for them, in the same order
	 * @return a stage completing once the permits are given back, or the store has given up on giving them
	 * back; failed with what {@code giveBack} would throw
	 */
	default CompletionStage<Void> giveBackAsync(List<KeyedPolicy> limits, List<Decision> decisions) {
		try {
			giveBack(limits, decisions);
			return CompletableFuture.completedFuture(null);
		}
		catch (RuntimeException | Error ex) {
			return CompletableFuture.failedFuture(ex);
		}
	}

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
	 * Returns what a request of one permit from {@code key} would be answered right now, without taking anything:
	 * whether it would pass, the permits left, how long until one would pass and until the key is full again.
	 * @param key who is limited
	 * @param policy the policy
	 * @return the state of the key as a decision that took nothing
	 */
	Decision inspect(String key, RateLimitPolicy policy);

	/**
	 * Resets {@code key} to its full quota under the policy named as {@code policy} is, whatever the cost of its
	 * requests, as if it had never been seen.
	 * @param key who is limited
	 * @param policy the policy
	 * @throws IllegalStateException if the store could not reset the key, which then keeps its state
	 */
	void reset(String key, RateLimitPolicy policy);

	/**
	 * Starts deciding under {@code to} the keys that {@code from} has decided so far, for a policy whose limit,
	 * window or burst change while the application runs. No key gets a fresh quota from the change: a key takes
	 * the permits it has in use under {@code from} along (its capacity less what it has left), as if it had
	 * taken them under {@code to} at its first request after the change, up to the capacity of {@code to}; a key
	 * that {@code from} has never seen, or that is full again, starts full. A key carries its permits over at
	 * most once, until {@link RateLimitPolicy#fullAfter() every key of} {@code from} would be full again; a key
	 * still held by an earlier change within that time is carried over from it, for the last
	 * {@link #MAX_CARRIED_CHANGES} changes. Requests decided under
	 * {@code to} afterwards, at any cost, share the carried state.
	 * @param from the policy in force so far, at any cost
	 * @param to the policy from now on, of the same name and algorithm
	 * @throws IllegalArgumentException if the policies differ in their name or algorithm
	 */
	void change(RateLimitPolicy from, RateLimitPolicy to);

	/**
	 * Checks that {@code to} may replace {@code from} in {@link #change}: the same name and algorithm.
	 * @param from the policy in force so far
	 * @param to the policy from now on
	 * @return whether the change changes anything but the cost, which a store's states do not depend on
	 * @throws IllegalArgumentException naming what differs
	 */
	static boolean checkChange(RateLimitPolicy from, RateLimitPolicy to) {
		if (!from.name().equals(to.name()) || from.algorithm() != to.algorithm()) {
			throw new IllegalArgumentException("A policy can change its limit, window and burst only, not '"
					+ from.name() + "' (" + from.algorithm() + ") into '" + to.name() + "' (" + to.algorithm() + ")");
		}
		return !from.withCost(1).equals(to.withCost(1));
	}

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
