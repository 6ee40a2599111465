package dev.ratelimit.spring.observability.internal;

import java.util.List;
import java.util.Locale;
import java.util.StringJoiner;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;

import dev.ratelimit.core.Decision;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.RateLimitStore;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.observation.ObservationView;

/**
 * Wraps each decision of a request in the {@code ratelimit.decision} {@link Observation}, whose scope is open
 * while the store decides, so that the observation of the Redis client's call is its child. Its low-cardinality
 * key values are the policies, the store, the outcome and, on a store that has a failure policy, such as Redis,
 * whether the failure policy decided; never a key or anything else per client.
 */
public final class ObservedDecisions implements DecisionObserver {

	static final String NAME = "ratelimit.decision";

	static final String POLICY = "ratelimit.policy";

	static final String STORE = "ratelimit.store";

	static final String OUTCOME = "ratelimit.outcome";

	static final String FAILURE_POLICY = "ratelimit.failure_policy";

	private final ObservationRegistry registry;

	private final String store;

	public ObservedDecisions(ObservationRegistry registry, String store) {
		this.registry = registry;
		this.store = store;
	}

	/**
	 * {@inheritDoc}
	 * <p>
	 * The scope is open while the store decides, or sends its call, so that the client's observation is a child;
	 * the observation stops when the decisions are made, on whichever thread makes them. A failure policy that
	 * decides there, outside the scope, is not marked.
	 */
	@Override
	public CompletionStage<List<Decision>> decide(RateLimitStore store, List<RateLimitPolicy> policies,
			Supplier<CompletionStage<List<Decision>>> decision) {
		DecisionContext context = new DecisionContext();
		Observation observation = start(context, policies);
		CompletionStage<List<Decision>> decisions;
		Observation.Scope scope = observation.openScope();
		try {
			decisions = decision.get();
		}
		catch (RuntimeException ex) {
			observation.error(ex);
			observation.stop();
			throw ex;
		}
		finally {
			scope.close();
		}
		return decisions.whenComplete((decided, ex) -> {
			if (ex != null) {
				observation.error((ex instanceof CompletionException && ex.getCause() != null) ? ex.getCause() : ex);
				observation.stop();
			}
			else {
				stop(observation, context, store, decided);
			}
		});
	}

	private Observation start(DecisionContext context, List<RateLimitPolicy> policies) {
		return Observation.createNotStarted(NAME, () -> context, this.registry)
			.contextualName(NAME)
			.lowCardinalityKeyValue(POLICY, names(policies))
			.lowCardinalityKeyValue(STORE, this.store)
			.start();
	}

	private static List<Decision> stop(Observation observation, DecisionContext context, RateLimitStore store,
			List<Decision> decisions) {
		observation.lowCardinalityKeyValue(OUTCOME,
				RateLimitMetrics.Outcome.of(decisions).name().toLowerCase(Locale.ROOT));
		if (store.failures().isPresent()) {
			observation.lowCardinalityKeyValue(FAILURE_POLICY, String.valueOf(context.failurePolicy));
		}
		observation.stop();
		return decisions;
	}

	@Override
	public void failurePolicyDecided() {
		for (ObservationView current = this.registry.getCurrentObservation(); current != null; current = current
			.getContextView()
			.getParentObservation()) {
			if (current.getContextView() instanceof DecisionContext decision) {
				decision.failurePolicy = true;
				return;
			}
		}
	}

	private static String names(List<RateLimitPolicy> policies) {
		if (policies.size() == 1) {
			return policies.get(0).name();
		}
		StringJoiner names = new StringJoiner(",");
		for (RateLimitPolicy policy : policies) {
			names.add(policy.name());
		}
		return names.toString();
	}

	/** The context of one decision, which the failure listener marks on the deciding thread. */
	static final class DecisionContext extends Observation.Context {

		volatile boolean failurePolicy;

	}

}
