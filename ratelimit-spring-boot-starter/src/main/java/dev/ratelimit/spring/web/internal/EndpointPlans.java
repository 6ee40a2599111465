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
 * {@link PlanResolver}. A request of a client on {@link PlanResolver#NO_PLAN no plan} gets the declarations' own
 * limits; so does a request on a plan that no declaration knows, which the log reports at most once per
 * endpoint per minute, naming the plan: never unlimited. A client the resolver does not recognise, or whose plan
 * it fails to resolve, gets the declarations' own limits under its address, whatever its request says it is: a
 * value the client invents, such as an API key, never buys a quota of its own.
 */
final class EndpointPlans {

	private static final Log logger = LogFactory.getLog(RequestDecisions.class);

	private final Function<LimitedRequest, @Nullable String> resolver;

	private final Map<String, EndpointLimits> byPlan;

	private final ThrottledWarning warning;

	/** The limits of unrecognised clients, made once for the defaults they were made of. */
	private volatile @Nullable Unrecognised unrecognised;

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

	/**
	 * Returns the limits of the plan of {@code request}, or {@code defaults}, or those keyed by the client's
	 * address for a client not recognised, as {@code current} says they are in force now.
	 */
	EndpointLimits select(LimitedRequest request, EndpointLimits defaults, CurrentLimits current) {
		String plan;
		try {
			plan = this.resolver.apply(request);
		}
		catch (RuntimeException ex) {
			this.warning.warn(() -> "Could not resolve the plan of " + request.describe() + " (" + ex
					+ "): decided by the limits without a plan, under the client's address");
			return unrecognised(current.current(defaults));
		}
		if (plan == null) {
			return unrecognised(current.current(defaults));
		}
		if (plan.isEmpty()) {
			return current.current(defaults);
		}
		EndpointLimits limits = this.byPlan.get(PolicyNames.canonical(plan));
		if (limits == null) {
			this.warning.warn(() -> "Plan '" + plan + "' of " + request.describe()
					+ " is declared by none of " + defaults.policies().stream().map(RateLimitPolicy::name).toList()
					+ ", which know " + this.byPlan.keySet() + ": decided by the limits without a plan");
			return current.current(defaults);
		}
		return current.current(limits);
	}

	/** The limits of a client not recognised, made once for the limits in force they were made of. */
	private EndpointLimits unrecognised(EndpointLimits defaults) {
		Unrecognised made = this.unrecognised;
		if (made == null || made.defaults != defaults) {
			made = new Unrecognised(defaults, defaults.underClientAddress());
			this.unrecognised = made;
		}
		return made.limits;
	}

	private record Unrecognised(EndpointLimits defaults, EndpointLimits limits) {
	}

}
