package dev.ratelimit.spring.observability.internal;

import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;

import dev.ratelimit.core.Decision;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.RateLimitStore;

/**
 * Observes each decision of a request, for tracing; there is none without an observation registry, and the
 * store then decides directly.
 */
public interface DecisionObserver {

	/**
	 * Observes the decision of one request's limits, made by {@code decision}: for a caller that waits, a stage
	 * complete when returned; for one that must not, a stage the store completes later, observed until then.
	 * @param store the store that decides
	 * @param policies the policies of the request, as its metrics name them
	 * @param decision makes the decision in the store
	 * @return the store's decisions, once made
	 */
	CompletionStage<List<Decision>> decide(RateLimitStore store, List<RateLimitPolicy> policies,
			Supplier<CompletionStage<List<Decision>>> decision);

	/**
	 * Notes that the decision under way on this thread is the store's failure policy's, not its server's.
	 */
	void failurePolicyDecided();

}
