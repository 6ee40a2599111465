package dev.ratelimit.spring.webmvc;

import java.util.LinkedHashMap;
import java.util.Map;

import jakarta.servlet.Filter;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.security.web.FilterChainProxy;
import org.springframework.security.web.SecurityFilterChain;
import org.springframework.security.web.authentication.UsernamePasswordAuthenticationFilter;
import org.springframework.security.web.authentication.logout.LogoutFilter;
import org.springframework.security.web.authentication.ui.DefaultLoginPageGeneratingFilter;
import org.springframework.security.web.authentication.ui.DefaultLogoutPageGeneratingFilter;

/**
 * The paths that a filter of Spring Security's servlet filter chains answers itself, at its default path. Only
 * loaded when Spring Security is on the classpath.
 */
final class SecurityFilters {

	private SecurityFilters() {
	}

	/**
	 * Returns the paths answered by a filter of a {@link FilterChainProxy} bean, each with the filter's simple
	 * name.
	 */
	static Map<String, String> answeredPaths(ListableBeanFactory beanFactory) {
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
		return answered;
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
