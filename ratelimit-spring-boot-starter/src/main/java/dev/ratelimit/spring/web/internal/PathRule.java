package dev.ratelimit.spring.web.internal;

import java.util.Map;
import java.util.Set;

import org.jspecify.annotations.Nullable;

import org.springframework.http.server.PathContainer;
import org.springframework.web.util.pattern.PathPattern;

/**
 * A {@code ratelimit.rules} entry, compiled.
 *
 * @param property where the rule is configured, such as {@code ratelimit.rules[0]}
 * @param pattern the path pattern
 * @param methods the HTTP methods it applies to, all when empty
 * @param limits the rule's limit
 * @param beforeSecurity whether the rule is decided in the filter ordered before Spring Security's filter chain
 * rather than with the handlers
 */
public record PathRule(String property, PathPattern pattern, Set<String> methods, EndpointLimits limits,
		boolean beforeSecurity) {

	/** Returns the pattern's template variables if the request matches, otherwise null. */
	@Nullable Map<String, String> match(String method, PathContainer path) {
		if (!this.methods.isEmpty() && !this.methods.contains(method)) {
			return null;
		}
		PathPattern.PathMatchInfo info = this.pattern.matchAndExtract(path);
		return (info != null) ? info.getUriVariables() : null;
	}

}
