package dev.ratelimit.spring.web.internal;

import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Function;

import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.TimeSource;
import dev.ratelimit.spring.PlanResolver;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * The limits of an endpoint on each plan that its declarations know, chosen per request by the application's
 * {@link PlanResolver}. A request without a plan gets the declarations' own limits; so does a request on a
 * plan that no declaration knows, or whose resolver fails, which the log reports at most once per endpoint
 * per minute, naming the plan: never unlimited.
 */
final class EndpointPlans {

	private static final Log logger = LogFactory.getLog(RequestDecisions.class);

	private final Function<LimitedRequest, @Nullable String> resolver;

	private final Map<String, EndpointLimits> byPlan;

	private final ThrottledWarning warning;

	EndpointPlans(Function<LimitedRequest, @Nullable String> resolver, Map<String, EndpointLimits> byPlan,
			TimeSource time) {
		this.resolver = resolver;
		this.byPlan = Collections.unmodifiableMap(new LinkedHashMap<>(byPlan));
		this.warning = new ThrottledWarning(logger, time);
	}

	/** Returns the limits of every plan. */
	Collection<EndpointLimits> limits() {
		return this.byPlan.values();
	}

	/** Returns the limits of the plan of {@code request}, or {@code defaults}. */
	EndpointLimits select(LimitedRequest request, EndpointLimits defaults) {
		String plan;
		try {
			plan = this.resolver.apply(request);
		}
		catch (RuntimeException ex) {
			this.warning.warn(() -> "Could not resolve the plan of " + request.describe() + " (" + ex
					+ "): decided by the limits without a plan");
			return defaults;
		}
		if (plan == null || plan.isEmpty()) {
			return defaults;
		}
		EndpointLimits limits = this.byPlan.get(PolicyNames.canonical(plan));
		if (limits == null) {
			this.warning.warn(() -> "Plan '" + plan + "' of " + request.describe()
					+ " is declared by none of " + defaults.policies().stream().map(RateLimitPolicy::name).toList()
					+ ", which know " + this.byPlan.keySet() + ": decided by the limits without a plan");
			return defaults;
		}
		return limits;
	}

}
