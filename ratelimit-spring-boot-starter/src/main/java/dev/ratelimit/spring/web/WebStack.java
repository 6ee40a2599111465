package dev.ratelimit.spring.web;

import java.util.List;
import java.util.function.BiConsumer;

import org.springframework.web.method.HandlerMethod;

/**
 * What the shared decision path learns at startup of the web stack that serves the application: its handler
 * methods with their routes, and what it has to say of the rules it decides.
 */
public interface WebStack {

	/**
	 * Calls {@code action} with every handler method of the application and its routes, each written as the
	 * startup report writes it, such as {@code GET,HEAD /demo/gcra}.
	 * @param action what to do with each handler method and its routes
	 */
	void forEachHandler(BiConsumer<HandlerMethod, List<String>> action);

	/**
	 * Returns one warning per rule decided after the stack's security that a part of the stack answers before
	 * the rule is ever decided, such as a login page.
	 * @param rules the rules decided with the handlers
	 * @return the warnings, none by default
	 */
	default List<String> ruleWarnings(List<PathRule> rules) {
		return List.of();
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
