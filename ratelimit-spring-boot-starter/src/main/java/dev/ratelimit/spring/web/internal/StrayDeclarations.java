package dev.ratelimit.spring.web.internal;

import java.lang.reflect.Method;
import java.util.Set;

import dev.ratelimit.spring.RateLimitConfigurationException;
import dev.ratelimit.spring.RateLimited;


/**
 * Stops the start at a {@link RateLimited} on a controller that no request can reach: the web stack limits the
 * handler methods of its controllers, and a controller method that maps no request would never be limited. The
 * declarations on other beans limit their calls, through {@code LimitedMethods}.
 */
final class StrayDeclarations {

	private StrayDeclarations() {
	}

	/**
	 * Fails at the first controller method whose {@link RateLimited} is not on a handler.
	 * @param type a controller
	 * @param beanName its bean's name
	 * @param stack the web stack whose handlers are limited
	 * @param handlers the handler methods of every handler mapping
	 */
	static void check(Class<?> type, String beanName, WebStack stack, Set<Method> handlers) {
		for (Method method : Declarations.methods(type)) {
			if (!handlers.contains(method)) {
				throw new RateLimitConfigurationException("@RateLimited on " + type.getName() + "."
						+ method.getName() + "() (bean '" + beanName + "') can never take effect: the method maps "
						+ "no request, and only " + stack.name() + " handler methods (@RequestMapping, "
						+ "@GetMapping...) of a controller are limited.",
						"Move the annotation to the controller method that serves the request, or to a method of "
								+ "a bean that is no controller, whose calls it then limits.");
			}
		}
	}

}
