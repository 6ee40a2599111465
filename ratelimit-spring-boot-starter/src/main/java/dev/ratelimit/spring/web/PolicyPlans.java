package dev.ratelimit.spring.web;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The plan of every policy that holds one plan's limits, as declared at startup, for the {@code plan} tag of
 * the metrics: plans are declared, so the tag has as many values as the declarations have plans.
 */
public final class PolicyPlans {

	private final Map<String, String> plans = new ConcurrentHashMap<>();

	void register(String policy, String plan) {
		this.plans.put(policy, plan);
	}

	/** Returns the plan of the policy of that name, {@link EndpointLimits#NO_PLAN} for a declaration's own. */
	String plan(String policy) {
		return this.plans.getOrDefault(policy, EndpointLimits.NO_PLAN);
	}

}
