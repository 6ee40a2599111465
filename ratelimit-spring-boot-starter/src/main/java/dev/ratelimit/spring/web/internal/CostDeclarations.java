package dev.ratelimit.spring.web.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.spring.RateLimitConfigurationException;
import org.jspecify.annotations.Nullable;

import org.springframework.expression.Expression;

/**
 * The cost expression of a declaration, which computes each request's cost: not together with a constant cost,
 * and such that any cost up to the capacity computes exactly under the policy and each of its plans.
 */
final class CostDeclarations {

	private CostDeclarations() {
	}

	/** Returns the expression parsed, or null if there is none. */
	static @Nullable Expression costExpression(String where, String action, RateLimitPolicy policy,
			Map<String, RateLimitPolicy> plans, @Nullable String expression) {
		if (expression == null || expression.isBlank()) {
			return null;
		}
		String text = expression.trim();
		if (policy.cost() != 1) {
			throw new RateLimitConfigurationException("Invalid " + where + ": cost (" + policy.cost()
					+ ") and costExpression ('" + text + "') are both set: a request's cost is one or the other.",
					action + " Keep one of them.");
		}
		Expression parsed = DeclaredValues.spel("Invalid " + where + ": costExpression ", text, action);
		List<RateLimitPolicy> all = new ArrayList<>(plans.values());
		all.add(0, policy);
		for (RateLimitPolicy each : all) {
			DeclaredValues.parse("Invalid " + where + ": a cost up to the capacity: ", action,
					() -> each.withCost(each.capacity()));
		}
		return parsed;
	}

}
