package dev.ratelimit.spring.webmvc;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import dev.ratelimit.spring.web.PathRule;
import jakarta.servlet.Filter;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.http.server.PathContainer;
import org.springframework.security.web.FilterChainProxy;
import org.springframework.security.web.SecurityFilterChain;
import org.springframework.security.web.authentication.UsernamePasswordAuthenticationFilter;
import org.springframework.security.web.authentication.logout.LogoutFilter;
import org.springframework.security.web.authentication.ui.DefaultLoginPageGeneratingFilter;
import org.springframework.security.web.authentication.ui.DefaultLogoutPageGeneratingFilter;

/**
 * Finds the rules decided after Spring Security that are aimed at a path that Spring Security's own filters
 * answer, such as {@code /login}: the interceptor runs after every servlet filter, so such a rule is listed as
 * active and never applies. Only loaded when Spring Security is on the classpath.
 */
final class SecurityAnsweredRules {

	/** A path that no application serves: a rule matching it is a catch-all, which these paths only escape. */
	private static final PathContainer ANY_OTHER_PATH = PathContainer.parsePath("/ratelimit-probe/any/other/path");

	private SecurityAnsweredRules() {
	}

	/**
	 * Returns one warning per rule aimed at a path that a filter of a Spring Security filter chain answers
	 * itself, at its default path.
	 */
	static List<String> warnings(ListableBeanFactory beanFactory, List<PathRule> rules) {
		Map<String, String> answered = new LinkedHashMap<>();
		for (FilterChainProxy proxy : beanFactory.getBeansOfType(FilterChainProxy.class, false, false).values()) {
			for (SecurityFilterChain chain : proxy.getFilterChains()) {
				for (Filter filter : chain.getFilters()) {
					String path = defaultPath(filter);
					if (path != null) {
						answered.putIfAbsent(path, filter.getClass().getSimpleName());
					}
				}
			}
		}
		List<String> warnings = new ArrayList<>();
		for (PathRule rule : rules) {
			if (rule.pattern().matches(ANY_OTHER_PATH)) {
				continue;
			}
			answered.forEach((path, filter) -> {
				if (rule.pattern().matches(PathContainer.parsePath(path))) {
					warnings.add(rule.property() + " (" + rule.pattern() + ") never applies to " + path
							+ ": Spring Security's " + filter + " answers it before Spring MVC, where this rule is "
							+ "decided. Set " + rule.property() + ".before-security=true to decide it before Spring "
							+ "Security's filter chain.");
				}
			});
		}
		return warnings;
	}

	private static @Nullable String defaultPath(Filter filter) {
		if (filter instanceof UsernamePasswordAuthenticationFilter || filter instanceof DefaultLoginPageGeneratingFilter) {
			return "/login";
		}
		if (filter instanceof LogoutFilter || filter instanceof DefaultLogoutPageGeneratingFilter) {
			return "/logout";
		}
		return null;
	}

}
