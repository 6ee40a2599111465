package dev.ratelimit.spring.web.internal;

import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.BiConsumer;

import org.springframework.web.method.HandlerMethod;

/**
 * What the shared decision path learns at startup of the web stack that serves the application: its handler
 * methods with their routes, and the paths its Spring Security answers before any rule decided with the
 * handlers.
 */
public interface WebStack {

	/**
	 * Calls {@code action} with every handler method of the application and its routes, each written as the
	 * startup report writes it, such as {@code GET,HEAD /demo/gcra}.
	 * @param action what to do with each handler method and its routes
	 */
	void forEachHandler(BiConsumer<HandlerMethod, List<String>> action);

	/**
	 * Returns the types of the resolver beans that a {@code bean:} key, plan or exemption may name on this stack,
	 * with how each is asked about a request.
	 * @return the stack's resolver types
	 */
	ResolverTypes resolvers();

	/**
	 * Returns the stack's name, as startup messages write it.
	 * @return such as {@code Spring MVC}
	 */
	String name();

	/**
	 * Returns whether the application serves web requests: false where no web stack does, so that rules and the
	 * declarations on controllers limit nothing.
	 * @return true unless no web stack serves the application
	 */
	default boolean servesRequests() {
		return true;
	}

	/**
	 * Returns the paths that a filter of the application's Spring Security answers itself, such as a login page,
	 * so that a rule decided with the handlers never applies to them.
	 * @return each path with the simple name of the filter that answers it, none by default
	 */
	default Map<String, String> securityAnsweredPaths() {
		return Map.of();
	}

	/**
	 * Returns the routes of a handler mapped to {@code methods} and {@code patterns}, as the startup report writes
	 * them: both stacks serve HEAD with a GET handler, so a GET handler's routes name HEAD too.
	 * @param methods the handler's HTTP methods, none for every method
	 * @param patterns the handler's path patterns
	 * @return one route per pattern
	 */
	static List<String> routes(Collection<String> methods, Collection<String> patterns) {
		Set<String> served = new LinkedHashSet<>(methods);
		if (served.contains("GET")) {
			served.add("HEAD");
		}
		return patterns.stream().map((pattern) -> route(served, pattern)).toList();
	}

	/**
	 * Returns a route as the startup report writes it.
	 * @param methods the HTTP methods, none for every method
	 * @param pattern the path pattern
	 * @return the methods, comma-separated or {@code *}, then the pattern
	 */
	static String route(Iterable<String> methods, String pattern) {
		String joined = String.join(",", methods);
		return (joined.isEmpty() ? "*" : joined) + " " + pattern;
	}

}
