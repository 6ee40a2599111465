package dev.ratelimit.spring.web.internal;

import java.lang.reflect.Method;
import java.util.Collection;
import java.util.HashSet;
import java.util.Set;

import dev.ratelimit.spring.RateLimitConfigurationException;
import dev.ratelimit.spring.RateLimited;

import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.core.annotation.MergedAnnotations;
import org.springframework.core.annotation.MergedAnnotations.SearchStrategy;
import org.springframework.stereotype.Controller;
import org.springframework.web.method.HandlerMethod;

/**
 * Stops the start at a {@link RateLimited} that no request can reach: the web stack limits the handler methods
 * of its controllers only, so the annotation on a method of a {@code @Service}, or on a controller method that
 * maps no request, would never limit anything.
 */
final class StrayDeclarations {

	private StrayDeclarations() {
	}

	/**
	 * Fails at the first bean whose {@link RateLimited} is not on a handler.
	 * @param beanFactory the beans to look through
	 * @param stack the web stack whose handlers are limited
	 * @param handlers the handler methods of every handler mapping
	 */
	static void check(ListableBeanFactory beanFactory, WebStack stack, Collection<HandlerMethod> handlers) {
		Set<Method> methods = new HashSet<>();
		Set<Class<?>> controllers = new HashSet<>();
		handlers.forEach((handler) -> {
			methods.add(handler.getMethod());
			controllers.add(handler.getBeanType());
		});
		Declarations.forEachBeanClass(beanFactory,
				(name, type) -> check(type, name, stack, methods, controllers.contains(type)));
	}

	private static void check(Class<?> type, String beanName, WebStack stack, Set<Method> handlers,
			boolean controller) {
		if (!controller && Declarations.onClass(type)) {
			throw stray(stack, "@RateLimited on class " + type.getName() + " (bean '" + beanName + "')",
					"it is no controller: none of its methods handles a request");
		}
		for (Method method : Declarations.methods(type)) {
			if (!handlers.contains(method)) {
				throw stray(stack, "@RateLimited on " + type.getName() + "." + method.getName() + "() (bean '"
						+ beanName + "')",
						MergedAnnotations.from(type, SearchStrategy.TYPE_HIERARCHY).isPresent(Controller.class)
								? "the method maps no request" : "the bean is no controller");
			}
		}
	}

	private static RateLimitConfigurationException stray(WebStack stack, String declaration, String reason) {
		return new RateLimitConfigurationException(declaration + " can never take effect: " + reason
				+ ", and only " + stack.name() + " handler methods (@RequestMapping, @GetMapping...) are limited.",
				"Move the annotation to the controller method that serves the request, or limit the code with a "
						+ "dev.ratelimit.core.RateLimiter of your own.");
	}

}
