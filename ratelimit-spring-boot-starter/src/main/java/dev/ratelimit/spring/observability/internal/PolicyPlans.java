package dev.ratelimit.spring.observability.internal;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The plan of every policy that holds one plan's limits, as declared at startup, for the {@code plan} tag of
 * the metrics: plans are declared, so the tag has as many values as the declarations have plans.
 */
public final class PolicyPlans {

	/** The plan of the limits that requests without a plan get: a declaration's own. */
	public static final String NO_PLAN = "default";

	private final Map<String, String> plans = new ConcurrentHashMap<>();

	/**
	 * Registers the plan of a policy that holds one plan's limits.
	 * @param policy the policy's name
	 * @param plan the plan's name
	 */
	public void register(String policy, String plan) {
		this.plans.put(policy, plan);
	}

	/** Returns the plan of the policy of that name, {@link #NO_PLAN} for a declaration's own. */
	String plan(String policy) {
		return this.plans.getOrDefault(policy, NO_PLAN);
	}

}
