package dev.ratelimit.spring.web.internal;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.spring.RateLimitConfigurationException;
import dev.ratelimit.spring.RateLimited;
import org.jspecify.annotations.Nullable;

import org.springframework.core.annotation.MergedAnnotation;
import org.springframework.core.annotation.MergedAnnotations;
import org.springframework.core.annotation.MergedAnnotations.SearchStrategy;
import org.springframework.expression.Expression;
import org.springframework.util.StringUtils;
import org.springframework.web.method.HandlerMethod;

/**
 * Turns the {@link RateLimited} declarations of a handler method, or of its class, into the limits of the
 * endpoint, with the values of {@code ratelimit.policies.<name>} over each declaration's. A policy without a
 * name is named after its method, {@code Controller.method}, or class, and numbered when several are stacked;
 * stacked policies must share their client terms and the outcomes they count, since they are decided together.
 */
final class AnnotationDeclarations {

	private final LimitSettings settings;

	private final PolicyNames names;

	private final EndpointDeclarations endpoints;

	/** Class-level declarations, shared by every handler method of the class. */
	private final Map<Class<?>, EndpointLimits> classLimits = new HashMap<>();

	AnnotationDeclarations(LimitSettings settings, PolicyNames names, EndpointDeclarations endpoints) {
		this.settings = settings;
		this.names = names;
		this.endpoints = endpoints;
	}

	/** Returns the limits of a handler method: its own declarations, else its class's, else none. */
	synchronized @Nullable EndpointLimits forHandler(HandlerMethod handlerMethod) {
		return limits(handlerMethod.getBeanType(), handlerMethod.getMethod(), () -> ParameterBinding.of(handlerMethod));
	}

	/**
	 * Returns the limits of the calls of a bean method that serves no request, its own declarations, else its
	 * class's, else none; fails the start at what a call cannot be limited by: a key, plan, exemption or counted
	 * outcome that reads an HTTP request or response, or a method that a proxy cannot advise.
	 */
	synchronized @Nullable EndpointLimits forBeanMethod(Class<?> beanType, Method method) {
		EndpointLimits limits = limits(beanType, method, () -> ParameterBinding.of(method));
		if (limits != null) {
			MethodLimitChecks.check(site(beanType, method), beanType, method, limits);
		}
		return limits;
	}

	private @Nullable EndpointLimits limits(Class<?> beanType, Method method,
			Supplier<List<ParameterBinding>> bindings) {
		List<MergedAnnotation<RateLimited>> onMethod = declarations(
				MergedAnnotations.from(method, SearchStrategy.TYPE_HIERARCHY));
		if (!onMethod.isEmpty()) {
			return declare(onMethod, beanType.getSimpleName() + "." + method.getName(), site(beanType, method),
					bindings.get());
		}
		List<MergedAnnotation<RateLimited>> onClass = declarations(
				MergedAnnotations.from(beanType, SearchStrategy.TYPE_HIERARCHY));
		if (onClass.isEmpty()) {
			return null;
		}
		Class<?> declaringClass = (Class<?>) onClass.get(0).getSource();
		Class<?> owner = (declaringClass != null) ? declaringClass : beanType;
		EndpointLimits limits = this.classLimits.get(owner);
		if (limits == null) {
			limits = declare(onClass, owner.getSimpleName(), "@RateLimited on class " + owner.getName(), List.of());
			this.classLimits.put(owner, limits);
		}
		return limits;
	}

	/** The declaration on a method, as messages name it: {@code @RateLimited on Type.method(ParameterTypes)}. */
	static String site(Class<?> beanType, Method method) {
		return "@RateLimited on " + beanType.getName() + "." + method.getName() + "("
				+ StringUtils.arrayToCommaDelimitedString(
						Arrays.stream(method.getParameterTypes()).map(Class::getSimpleName).toArray())
				+ ")";
	}

	private static List<MergedAnnotation<RateLimited>> declarations(MergedAnnotations annotations) {
		List<MergedAnnotation<RateLimited>> found = annotations.stream(RateLimited.class).toList();
		if (found.isEmpty()) {
			return found;
		}
		// the closest declaring element wins, as a method's own annotations replace those it overrides
		Object source = found.get(0).getSource();
		return found.stream().filter((annotation) -> annotation.getSource() == source).toList();
	}

	private EndpointLimits declare(List<MergedAnnotation<RateLimited>> annotations, String defaultName, String site,
			List<ParameterBinding> bindings) {
		List<EndpointDeclarations.Declared> declared = new ArrayList<>();
		ExemptionDeclarations.ClientTerms terms = null;
		String termsSite = null;
		String termsProperty = site;
		CountedOutcomes counted = null;
		String countedSite = null;
		for (int i = 0; i < annotations.size(); i++) {
			MergedAnnotation<RateLimited> annotation = annotations.get(i);
			String name = annotation.getString("name");
			if (name.isEmpty()) {
				name = (annotations.size() == 1) ? defaultName : defaultName + "." + (i + 1);
			}
			PolicyOverride entry = this.settings.override(name);
			LimitValues override = (entry != null) ? entry.values() : null;
			String where = site + ((entry != null) ? " with " + entry.property() : "");
			String action = "Fix the declaration, or its values under ratelimit.policies." + name + ".";
			RateLimitPolicy policy = policy(where, action, annotation, name, override);
			this.names.claim(policy.name(), site, action);
			String planProperty = "ratelimit.policies." + ((entry != null) ? entry.name() : name) + ".plans";
			Map<String, RateLimitPolicy> plans = this.endpoints.plans().plans(where, action, site, policy,
					annotation.synthesize().plans(), (override != null) ? override.plans() : Map.of(), planProperty);
			Expression cost = CostDeclarations.costExpression(where, action, policy, plans,
					(override != null && override.costExpression() != null) ? override.costExpression()
							: annotation.getString("costExpression"));
			String key = KeyDeclarations.normalize((override != null && override.key() != null) ? override.key()
					: annotation.getString("key"));
			ExemptionDeclarations.ClientTerms policyTerms = this.endpoints.exemptions()
				.terms((entry != null) ? entry.property() : site, override);
			if (terms == null) {
				terms = policyTerms;
				termsSite = where;
				termsProperty = (entry != null) ? entry.property() : site;
			}
			else if (!terms.equals(policyTerms)) {
				throw new RateLimitConfigurationException(site + " stacks limits with different client terms, "
						+ terms + " (" + termsSite + ") and " + policyTerms + " (" + where
						+ "): stacked limits are decided together, for one client.",
						"Give every limit of the declaration the same ipv6-prefix, exempt and exempt-if.");
			}
			CountedOutcomes policyCounted = counted(where, action, override, annotation);
			if (counted == null) {
				counted = policyCounted;
				countedSite = where;
			}
			else if (!counted.equals(policyCounted)) {
				throw new RateLimitConfigurationException(site + " stacks limits that count different outcomes, "
						+ counted + " (" + countedSite + ") and " + policyCounted + " (" + where
						+ "): stacked limits are decided together, and given back together.",
						"Give every limit of the declaration the same countStatus.");
			}
			declared.add(new EndpointDeclarations.Declared(policy,
					shadow(this.settings, (override != null) ? override.shadow() : null),
					where + ((entry != null) ? " (" + entry.origin() + ")" : ""), key, plans, cost,
					DeclaredValues.concurrency(where, action, (override != null && override.concurrency() != null)
							? override.concurrency() : annotation.getLong("concurrency"))));
		}
		return this.endpoints.limits(declared, terms, termsProperty, site, KeyDeclarations.action(site), bindings,
				counted);
	}

	/** Returns whether a policy is in shadow mode: as its own setting says, else as ratelimit.shadow does. */
	static boolean shadow(LimitSettings settings, @Nullable Boolean own) {
		return (own != null) ? own : settings.shadow();
	}

	/** Returns the outcomes that count against a declared policy: its override's if set, else its own. */
	private static CountedOutcomes counted(String where, String action, @Nullable LimitValues override,
			MergedAnnotation<RateLimited> annotation) {
		if (override != null && !override.countStatus().isEmpty()) {
			return CountedOutcomes.of(where + " count-status", action, override.countStatus());
		}
		return CountedOutcomes.of(where + " countStatus", action,
				Arrays.stream(annotation.getIntArray("countStatus")).boxed().toList());
	}

	private RateLimitPolicy policy(String where, String action, MergedAnnotation<RateLimited> annotation,
			String name, @Nullable LimitValues override) {
		long limit = (override != null && override.limit() != null) ? override.limit() : annotation.getLong("limit");
		DeclaredValues.Window window = DeclaredValues.window(where, action,
				(override != null && override.window() != null) ? override.window() : annotation.getString("window"));
		Algorithm algorithm = (override != null && override.algorithm() != null) ? override.algorithm()
				: algorithm(where, action, annotation.getEnumArray("algorithm", Algorithm.class));
		long declaredBurst = annotation.getLong("burst");
		long burst = (override != null && override.burst() != null) ? override.burst()
				: (declaredBurst != 0) ? declaredBurst : limit;
		long cost = (override != null && override.cost() != null) ? override.cost() : annotation.getLong("cost");
		long delayAfter;
		if (override != null && (override.delayAfter() != null || override.noDelay() != null)) {
			delayAfter = DeclaredValues.delayAfter(where, action, algorithm, burst, override.delayAfter(),
					"delay-after", Boolean.TRUE.equals(override.noDelay()), "no-delay");
		}
		else {
			long declared = annotation.getLong("delayAfter");
			delayAfter = DeclaredValues.delayAfter(where, action, algorithm, burst, (declared != 0) ? declared : null,
					"delayAfter", annotation.getBoolean("noDelay"), "noDelay");
		}
		Duration penalty = DeclaredValues.penalty(where, action, (override != null && override.penalty() != null)
				? override.penalty() : annotation.getString("penalty"));
		return DeclaredValues.parse("Invalid " + where + ": ", action,
				() -> new RateLimitPolicy(name, algorithm, limit, window.length(), burst, cost, delayAfter,
						Duration.ZERO, penalty, window.calendar()));
	}

	private Algorithm algorithm(String where, String action, Algorithm[] declared) {
		if (declared.length > 1) {
			throw new RateLimitConfigurationException(
					"Invalid " + where + ": algorithm names " + declared.length + " algorithms, at most one is allowed.",
					action);
		}
		return (declared.length == 1) ? declared[0] : this.settings.defaultAlgorithm();
	}

}
