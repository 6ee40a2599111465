package dev.ratelimit.spring.web.internal;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;

import dev.ratelimit.spring.RateLimitConfigurationException;

/**
 * Fails the start at a limit on a bean method that a call cannot be limited by: one that a proxy cannot advise
 * (a private, static or final method, or a method of a final class), or one that reads what only an HTTP request
 * has (a key of the client address or of a header, a key resolver bean, plans, counted statuses).
 */
final class MethodLimitChecks {

	private static final String KEYS = "key = \"#argument\" (or \"#argument.property\"), \"user\" or \"global\"";

	private MethodLimitChecks() {
	}

	static void check(String site, Class<?> beanType, Method method, EndpointLimits limits) {
		int modifiers = method.getModifiers();
		String unadvisable = Modifier.isPrivate(modifiers) ? "it is private"
				: Modifier.isStatic(modifiers) ? "it is static"
				: Modifier.isFinal(modifiers) ? "it is final"
				: Modifier.isFinal(beanType.getModifiers()) ? "its class is final" : null;
		if (unadvisable != null) {
			throw new RateLimitConfigurationException(site + " can never take effect: " + unadvisable
					+ ", and the limits of a bean method are applied by a Spring AOP proxy, which calls only "
					+ "public and protected methods that a subclass can override.",
					"Make the method public and not final, in a class that is not final.");
		}
		for (String key : limits.keySpecs()) {
			if (!key.equals(KeySource.USER) && !key.equals("global") && !KeyDeclarations.isExpression(key)) {
				throw new RateLimitConfigurationException(site + " keys its calls by '" + key
						+ "', which reads an HTTP request, and a call of a bean method has none.",
						"Give it " + KEYS + ", or override it with ratelimit.policies.<name>.key.");
			}
		}
		if (limits.plans() != null) {
			throw new RateLimitConfigurationException(site + " declares plans, which a PlanResolver chooses from "
					+ "an HTTP request, and a call of a bean method has none.",
					"Declare the plans on the controller method that serves the request.");
		}
		if (!limits.counted().all()) {
			throw new RateLimitConfigurationException(site + " counts only the responses of status "
					+ limits.counted() + ", and a call of a bean method has no response status.",
					"Remove countStatus, or move the limit to the controller method that serves the request.");
		}
	}

}
