package dev.ratelimit.spring.web.internal;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.spring.RateLimitConfigurationException;
import dev.ratelimit.spring.RateLimited;
import org.jspecify.annotations.Nullable;

import org.springframework.expression.Expression;
import org.springframework.http.HttpMethod;
import org.springframework.web.util.pattern.PathPattern;
import org.springframework.web.util.pattern.PathPatternParser;
import org.springframework.web.util.pattern.PatternParseException;

/**
 * Turns each entry of {@code ratelimit.rules} into a {@link PathRule}: its path pattern and HTTP methods (a GET
 * rule also limits HEAD, which both web stacks serve with the GET handler) and the limits of its one policy,
 * named {@code rule-<index>} unless it names itself. Of {@code ratelimit.policies}, only the {@code shadow} of a
 * rule's policy may be set; the rule sets everything else itself.
 */
final class RuleDeclarations {

	private static final HttpMethod[] STANDARD_METHODS = HttpMethod.values();

	private final LimitSettings settings;

	private final PolicyNames names;

	private final EndpointDeclarations endpoints;

	RuleDeclarations(LimitSettings settings, PolicyNames names, EndpointDeclarations endpoints) {
		this.settings = settings;
		this.names = names;
		this.endpoints = endpoints;
	}

	/** Returns the limits of every rule, in order. */
	synchronized List<PathRule> rules() {
		List<PathRule> rules = new ArrayList<>();
		List<LimitSettings.Rule> declared = this.settings.rules();
		for (int i = 0; i < declared.size(); i++) {
			rules.add(rule(PolicyNames.RULES + "[" + i + "]", declared.get(i), i));
		}
		return rules;
	}

	private PathRule rule(String property, LimitSettings.Rule rule, int index) {
		String action = "Update " + property + " in your application's configuration.";
		LimitValues values = rule.values();
		String path = required(property, action, "path", rule.path());
		if (!path.startsWith("/")) {
			throw new RateLimitConfigurationException("Invalid " + property + ".path: '" + path
					+ "' does not start with '/', so no request path can ever match it.", action
							+ " Write the path from the context path on, such as /" + path + ".");
		}
		PathPattern pattern;
		try {
			pattern = PathPatternParser.defaultInstance.parse(path);
		}
		catch (PatternParseException ex) {
			throw new RateLimitConfigurationException(
					"Invalid " + property + ".path: '" + path + "' is not a path pattern: " + ex.getMessage(), action);
		}
		Set<String> methods = new LinkedHashSet<>();
		for (String method : rule.methods()) {
			methods.add(httpMethod(property, action, method));
		}
		// both web stacks serve HEAD with the GET handler, so a HEAD request costs what the GET would
		if (methods.contains(HttpMethod.GET.name())) {
			methods.add(HttpMethod.HEAD.name());
		}
		String name = (rule.name() != null) ? rule.name() : "rule-" + index;
		RateLimitPolicy policy = policy(property, action, name, values, this.settings.defaultAlgorithm());
		this.names.claim(name, property, action);
		Map<String, RateLimitPolicy> plans = this.endpoints.plans().plans(property, action, property, policy,
				new RateLimited.Plan[0], values.plans(), property + ".plans");
		Expression cost = CostDeclarations.costExpression(property, action, policy, plans, values.costExpression());
		String keySpec = KeyDeclarations.normalize(values.key());
		if (rule.beforeSecurity() && keySpec.equals(KeySource.USER)) {
			throw new RateLimitConfigurationException("Invalid " + property + ".key: 'user' is never known to a rule "
					+ "with before-security, which is decided before Spring Security authenticates the request.",
					action + " Key it by ip, a header or a bean, or decide it after Spring Security.");
		}
		CountedOutcomes counted = CountedOutcomes.of(property + ".count-status", action, values.countStatus());
		// ratelimit.policies.<name>.shadow turns a rule's shadow mode on and off as it does a declaration's
		PolicyOverride entry = this.settings.override(name);
		boolean overridden = entry != null && entry.values().shadow() != null;
		boolean shadow = AnnotationDeclarations.shadow(this.settings,
				overridden ? entry.values().shadow() : values.shadow());
		String origin = property + (overridden ? " with " + entry.property() + ".shadow (" + entry.origin() + ")" : "");
		EndpointLimits limits = this.endpoints.limits(
				List.of(new EndpointDeclarations.Declared(policy, shadow, origin, keySpec, plans, cost,
						DeclaredValues.concurrency(property, action, values.concurrency()))),
				this.endpoints.exemptions().terms(property, values), property, property + ".key", action, List.of(),
				counted);
		return new PathRule(property, pattern, methods, limits, rule.beforeSecurity());
	}

	private static String httpMethod(String property, String action, String method) {
		String upper = method.trim().toUpperCase(Locale.ROOT);
		for (HttpMethod standard : STANDARD_METHODS) {
			if (standard.name().equals(upper)) {
				return upper;
			}
		}
		throw new RateLimitConfigurationException(
				"Invalid " + property + ".methods: '" + method + "' is not an HTTP method.", action);
	}

	/**
	 * Returns the policy that configured values set in full, as a rule's or a policy for code: a limit and a
	 * window required, the algorithm {@code defaultAlgorithm} unless set, the burst the limit unless set.
	 */
	static RateLimitPolicy policy(String property, String action, String name, LimitValues values,
			Algorithm defaultAlgorithm) {
		long limit = required(property, action, "limit", values.limit());
		DeclaredValues.Window window = DeclaredValues.window(property, action,
				required(property, action, "window", values.window()));
		Algorithm algorithm = (values.algorithm() != null) ? values.algorithm() : defaultAlgorithm;
		long burst = (values.burst() != null) ? values.burst() : limit;
		long delayAfter = DeclaredValues.delayAfter(property, action, algorithm, burst, values.delayAfter(),
				"delay-after", Boolean.TRUE.equals(values.noDelay()), "no-delay");
		Duration penalty = DeclaredValues.penalty(property, action, values.penalty());
		return DeclaredValues.parse("Invalid " + property + ": ", action,
				() -> new RateLimitPolicy(name, algorithm, limit, window.length(), burst,
						(values.cost() != null) ? values.cost() : 1, delayAfter, Duration.ZERO, penalty,
						window.calendar()));
	}

	private static <T> T required(String property, String action, String field, @Nullable T value) {
		if (value == null || (value instanceof String text && text.isBlank())) {
			throw new RateLimitConfigurationException(property + "." + field + " is required.", action);
		}
		return value;
	}

}
