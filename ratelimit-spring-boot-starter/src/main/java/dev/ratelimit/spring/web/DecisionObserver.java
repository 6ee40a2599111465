package dev.ratelimit.spring.web;

import java.util.List;
import java.util.concurrent.CompletionStage;

import dev.ratelimit.core.Decision;
import dev.ratelimit.core.KeyedPolicy;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.RateLimitStore;

/**
 * Observes each decision of a request, for tracing; there is none without an observation registry, and the
 * store then decides directly.
 */
public interface DecisionObserver {

	/**
	 * Decides the limits of one request in the store, observed.
	 * @param store the store that decides
	 * @param limits the request's limits, with their keys
	 * @param policies the policies of the request, as its metrics name them
	 * @return the store's decisions
	 */
	List<Decision> decide(RateLimitStore store, List<KeyedPolicy> limits, List<RateLimitPolicy> policies);

	/**
	 * Decides the limits of one request in the store without waiting for it, observed until the store has
	 * decided.
	 * @param store the store that decides
	 * @param limits the request's limits, with their keys
	 * @param policies the policies of the request, as its metrics name them
	 * @return the store's decisions, once made
	 */
	CompletionStage<List<Decision>> decideAsync(RateLimitStore store, List<KeyedPolicy> limits,
			List<RateLimitPolicy> policies);

	/**
	 * Notes that the decision under way on this thread is the Redis store's failure policy's, not Redis'.
	 */
	void failurePolicyDecided();

}
