package dev.ratelimit.spring.web.internal;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.TimeSource;
import org.jspecify.annotations.Nullable;

import org.springframework.expression.Expression;

/**
 * Assembles the limits of one endpoint from the policies declared for it, by an annotation or a rule: their key
 * sources (one per key as declared, computed once per request), their exemption, their costs, and the limits of
 * each plan that a policy knows, chosen per request by the plan resolver.
 */
final class EndpointDeclarations {

	private final KeyDeclarations keys;

	private final ExemptionDeclarations exemptions;

	private final PlanDeclarations plans;

	private final TimeSource time;

	EndpointDeclarations(KeyDeclarations keys, ExemptionDeclarations exemptions, PlanDeclarations plans,
			TimeSource time) {
		this.keys = keys;
		this.exemptions = exemptions;
		this.plans = plans;
		this.time = time;
	}

	/** The plans of the declarations. */
	PlanDeclarations plans() {
		return this.plans;
	}

	/** The client terms and exemptions of the declarations. */
	ExemptionDeclarations exemptions() {
		return this.exemptions;
	}

	/**
	 * Returns the limits of one endpoint.
	 * @param declared its policies, in their order
	 * @param terms the client terms its policies share, set under {@code property}
	 * @param keySite where the keys were declared, for messages
	 * @param action what fixes a key
	 * @param bindings the handler's parameters that a key or a cost may read
	 * @param counted the outcomes that count against its limits
	 */
	EndpointLimits limits(List<Declared> declared, ExemptionDeclarations.ClientTerms terms, String property,
			String keySite, String action, List<ParameterBinding> bindings, CountedOutcomes counted) {
		AddressKey address = this.exemptions.address(terms);
		List<Object> consulted = new ArrayList<>();
		Exemption exemption = this.exemptions.exemption(terms, property, address, consulted);
		Map<String, KeySource> sources = new HashMap<>();
		List<RateLimitPolicy> policies = new ArrayList<>(declared.size());
		List<Boolean> shadows = new ArrayList<>(declared.size());
		List<String> origins = new ArrayList<>(declared.size());
		List<String> keySpecs = new ArrayList<>(declared.size());
		List<KeySource> keys = new ArrayList<>(declared.size());
		List<@Nullable RequestCost> costs = new ArrayList<>(declared.size());
		List<Long> inFlight = new ArrayList<>(declared.size());
		Set<String> planNames = new LinkedHashSet<>();
		for (Declared each : declared) {
			KeySource source = sources.get(each.keySpec());
			if (source == null) {
				source = this.keys.source(each.keySpec(), keySite, action, bindings, address, consulted);
				sources.put(each.keySpec(), source);
			}
			policies.add(each.policy());
			shadows.add(each.shadow());
			origins.add(each.origin());
			keySpecs.add(each.keySpec());
			keys.add(source);
			costs.add((each.cost() != null)
					? new RequestCost(each.cost(), bindings, address, this.time, each.shadow()) : null);
			planNames.addAll(each.plans().keySet());
			inFlight.add(each.inFlight());
		}
		ResolverTypes.Resolver<@Nullable String> planResolver = null;
		if (!planNames.isEmpty()) {
			planResolver = this.plans.resolver(keySite, planNames);
			consulted.add(planResolver.bean());
		}
		EndpointLimits limits = new EndpointLimits(policies, shadows, origins, keySpecs, keys, address, exemption,
				counted, EndpointLimits.NO_PLAN, null, costs, consulted, inFlight);
		if (planResolver == null) {
			return limits;
		}
		Map<String, EndpointLimits> byPlan = new LinkedHashMap<>();
		for (String plan : planNames) {
			List<RateLimitPolicy> planPolicies = new ArrayList<>(declared.size());
			for (Declared each : declared) {
				planPolicies.add(each.plans().getOrDefault(plan, each.policy()));
			}
			byPlan.put(plan, limits.onPlan(plan, planPolicies));
		}
		return limits.withPlans(new EndpointPlans(planResolver.read(), byPlan, this.time));
	}

	/**
	 * One policy as declared for an endpoint.
	 * @param policy the policy
	 * @param shadow whether it is in shadow mode
	 * @param origin where it was declared and overridden, for the startup report
	 * @param keySpec its key as declared
	 * @param plans its policy on each plan it knows, by the plan's canonical name
	 * @param cost its cost expression, or null for a constant cost
	 * @param inFlight how many of a client's requests may be in flight at once under it, 0 for no such limit
	 */
	record Declared(RateLimitPolicy policy, boolean shadow, String origin, String keySpec,
			Map<String, RateLimitPolicy> plans, @Nullable Expression cost, long inFlight) {
	}

}
