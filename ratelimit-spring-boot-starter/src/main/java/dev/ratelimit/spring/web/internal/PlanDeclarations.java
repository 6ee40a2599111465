package dev.ratelimit.spring.web.internal;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.spring.RateLimitConfigurationException;
import dev.ratelimit.spring.RateLimited;
import dev.ratelimit.spring.observability.internal.PolicyPlans;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.ObjectProvider;

/**
 * The plans of a declared policy: each plan that the annotation or its override names becomes a policy of its
 * own, {@code <policy>:<plan>}, of the plan's values over the policy's, and the application's one plan resolver
 * tells per request which plan applies.
 */
final class PlanDeclarations {

	private static final Pattern PLAN_NAME = Pattern.compile("[A-Za-z0-9_-]{1,50}");

	private final BeanFactory beanFactory;

	private final ResolverTypes resolvers;

	private final PolicyNames names;

	private final PolicyPlans policyPlans;

	PlanDeclarations(BeanFactory beanFactory, ResolverTypes resolvers, PolicyNames names, PolicyPlans policyPlans) {
		this.beanFactory = beanFactory;
		this.resolvers = resolvers;
		this.names = names;
		this.policyPlans = policyPlans;
	}

	/**
	 * Returns the policy of each plan of a declaration, by the plan's canonical name: the annotation's plans
	 * with the values of {@code overrides} over them, and the plans that only the overrides name.
	 */
	Map<String, RateLimitPolicy> plans(String where, String action, String site, RateLimitPolicy policy,
			RateLimited.Plan[] declared, Map<String, LimitValues.PlanValues> overrides, String property) {
		Map<String, RateLimited.@Nullable Plan> annotated = new LinkedHashMap<>();
		Map<String, String> written = new LinkedHashMap<>();
		for (RateLimited.Plan plan : declared) {
			String canonical = planName(where, action, plan.name(), written);
			annotated.put(canonical, plan);
		}
		Map<String, LimitValues.@Nullable PlanValues> overridden = new LinkedHashMap<>();
		Map<String, String> overrideNames = new LinkedHashMap<>();
		overrides.forEach((name, plan) -> overridden.put(planName(property, "Fix " + property + "." + name + ".",
				name, overrideNames), plan));
		Set<String> names = new LinkedHashSet<>(annotated.keySet());
		names.addAll(overridden.keySet());
		Map<String, RateLimitPolicy> plans = new LinkedHashMap<>();
		for (String plan : names) {
			RateLimited.Plan annotation = annotated.get(plan);
			LimitValues.PlanValues override = overridden.get(plan);
			String planWhere = where + " plan '" + plan + "'"
					+ ((override != null) ? " with " + property + "." + overrideNames.get(plan) : "");
			long limit = (override != null && override.limit() != null) ? override.limit()
					: (annotation != null) ? annotation.limit() : policy.limit();
			String windowText = (override != null && override.window() != null) ? override.window()
					: (annotation != null) ? annotation.window() : "";
			DeclaredValues.Window window = windowText.isEmpty()
					? new DeclaredValues.Window(policy.window(), policy.calendar())
					: DeclaredValues.window(planWhere, action, windowText);
			long burst = (override != null && override.burst() != null) ? override.burst()
					: (annotation != null && annotation.burst() != 0) ? annotation.burst() : limit;
			// a queue that passes at once (noDelay) passes the plan's whole queue at once
			long delayAfter = (policy.delayAfter() != 0 && policy.delayAfter() == policy.burst()) ? burst
					: policy.delayAfter();
			String name = policy.name() + ":" + plan;
			RateLimitPolicy planPolicy = DeclaredValues.parse("Invalid " + planWhere + ": ", action,
					() -> new RateLimitPolicy(name, policy.algorithm(), limit, window.length(), burst, policy.cost(),
							delayAfter, policy.maxWait(), policy.penalty(), window.calendar()));
			this.names.claim(name, site, action);
			this.policyPlans.register(name, plan);
			plans.put(plan, planPolicy);
		}
		return plans;
	}

	/** Checks a plan's name and returns its canonical form, rejecting two names of one canonical form. */
	private static String planName(String where, String action, String name, Map<String, String> written) {
		if (!PLAN_NAME.matcher(name).matches()) {
			throw new RateLimitConfigurationException("Invalid " + where + ": plan name '" + name
					+ "' is invalid: use 1 to 50 letters, digits or the characters - _.", action);
		}
		String canonical = PolicyNames.canonical(name);
		String previous = written.putIfAbsent(canonical, name);
		if (previous != null) {
			throw new RateLimitConfigurationException("Invalid " + where + ": plans '" + previous + "' and '" + name
					+ "' differ only in case or punctuation, which plans ignore.", action
							+ " Give each plan a name that differs in its letters or digits.");
		}
		return canonical;
	}

	/** The application's one plan resolver, which an endpoint with plans needs. */
	ResolverTypes.Resolver<@Nullable String> resolver(String site, Set<String> plans) {
		return resolver(this.resolvers.plans(), site, plans);
	}

	private <T> ResolverTypes.Resolver<@Nullable String> resolver(ResolverTypes.Type<T, @Nullable String> type,
			String site, Set<String> plans) {
		ObjectProvider<T> resolvers = type.beans(this.beanFactory);
		T resolver = resolvers.getIfUnique();
		if (resolver != null) {
			return type.adapt(resolver);
		}
		long count = resolvers.stream().count();
		String name = type.name();
		throw new RateLimitConfigurationException(site + " declares plans " + plans + ", but the application has "
				+ ((count == 0) ? "no " + name + " bean" : count + " " + name + " beans")
				+ " to tell which plan a request is on.",
				"Define exactly one " + name + " bean, or remove the plans.");
	}

}
