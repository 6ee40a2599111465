package dev.ratelimit.spring.web.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.spring.RateLimitConfigurationException;
import org.jspecify.annotations.Nullable;

import org.springframework.expression.Expression;

/**
 * Declares the policies of {@code ratelimit.policies} that no annotation or rule declares and that set a limit
 * and a window: policies for code, which takes their limiters from {@code RateLimiters} and passes its own keys.
 * What applies only to requests (a key, plans, a cost expression, counted statuses, exemptions) stops the start.
 */
final class CodeDeclarations {

	/** The key spec of the limits that code decides, whose callers pass their keys themselves. */
	static final String KEY = "code";

	/** Where the keys of the limits that code decides are declared, as messages name it. */
	static final String SITE = "RateLimiters";

	/** The arguments of code's decisions: the key, and the permits the decision takes. */
	static final List<String> ARGUMENTS = List.of("key", "permits");

	/** The cost of code's decisions: the permits it passes. */
	private static final Expression PERMITS = DeclaredValues.spel("Invalid cost of " + SITE + ": ",
			"#" + ARGUMENTS.get(1), "Fix the cost of " + SITE + ".");

	/** The arguments that code's key and cost read. */
	private static final List<ParameterBinding> BINDINGS = ARGUMENTS.stream()
		.map((name) -> new ParameterBinding(name, ParameterBinding.Source.ARGUMENT, name))
		.toList();

	private final LimitSettings settings;

	private final PolicyNames names;

	private final EndpointDeclarations endpoints;

	CodeDeclarations(LimitSettings settings, PolicyNames names, EndpointDeclarations endpoints) {
		this.settings = settings;
		this.names = names;
		this.endpoints = endpoints;
	}

	/** Returns the limits of each policy for code, once every other declaration claimed its name. */
	synchronized List<EndpointLimits> declare() {
		List<EndpointLimits> declared = new ArrayList<>();
		for (Map.Entry<String, PolicyOverride> entry : this.settings.overrides().entrySet()) {
			PolicyOverride override = entry.getValue();
			LimitValues values = override.values();
			if (this.names.claimed(entry.getKey()) || values.limit() == null || values.window() == null) {
				continue;
			}
			String property = override.property();
			String action = "Update " + property + " in your application's configuration.";
			refuse(property, action, "key", values.key());
			refuse(property, action, "plans", values.plans().isEmpty() ? null : values.plans().keySet());
			refuse(property, action, "cost-expression", values.costExpression());
			refuse(property, action, "count-status", values.countStatus().isEmpty() ? null : values.countStatus());
			refuse(property, action, "exempt", values.exempt().isEmpty() ? null : values.exempt());
			refuse(property, action, "exempt-if", values.exemptIf());
			refuse(property, action, "ipv6-prefix", values.ipv6Prefix());
			RateLimitPolicy policy = RuleDeclarations.policy(property, action, override.name(), values,
					this.settings.defaultAlgorithm());
			this.names.claim(policy.name(), property, action);
			declared.add(limits(policy, AnnotationDeclarations.shadow(this.settings, values.shadow()),
					property + " (" + override.origin() + ")"));
		}
		return declared;
	}

	/**
	 * Returns the limits of code's decisions under one declared policy: the key the caller passes, nothing that
	 * reads a request.
	 */
	EndpointLimits limits(RateLimitPolicy policy, boolean shadow, String origin) {
		String action = "Fix " + origin + ".";
		return this.endpoints.limits(List.of(new EndpointDeclarations.Declared(policy, shadow, origin, KEY, Map.of(),
				PERMITS, 0)), this.endpoints.exemptions().terms(SITE, null), SITE, SITE, action, BINDINGS,
				CountedOutcomes.of(SITE, action, List.of()));
	}

	private static void refuse(String property, String action, String field, @Nullable Object value) {
		if (value != null) {
			throw new RateLimitConfigurationException(property + "." + field + " applies to requests, and "
					+ property + " declares a policy for code, which no annotation or rule declares: code passes "
					+ "its keys to the limiter itself.", action + " Remove " + field + ", or declare the policy "
							+ "with @RateLimited or a rule.");
		}
	}

}
