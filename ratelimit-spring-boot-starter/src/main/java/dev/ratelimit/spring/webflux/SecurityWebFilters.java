package dev.ratelimit.spring.webflux;

import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.Map;

import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.security.web.server.SecurityWebFilterChain;
import org.springframework.security.web.server.WebFilterChainProxy;
import org.springframework.security.web.server.authentication.logout.LogoutWebFilter;
import org.springframework.security.web.server.ui.LoginPageGeneratingWebFilter;
import org.springframework.security.web.server.ui.LogoutPageGeneratingWebFilter;
import org.springframework.web.server.WebFilter;

/**
 * The paths that a filter of Spring Security's reactive filter chains answers itself, at its default path. Only
 * loaded when Spring Security's reactive support is on the classpath.
 */
final class SecurityWebFilters {

	private SecurityWebFilters() {
	}

	/**
	 * Returns the paths answered by a filter of a {@link SecurityWebFilterChain} bean, each with the filter's
	 * simple name. Without such a bean, a {@link WebFilterChainProxy} runs Spring Security's default chain, which
	 * has form login and so answers {@code /login} and {@code /logout}.
	 */
	static Map<String, String> answeredPaths(ListableBeanFactory beanFactory) {
		Map<String, String> answered = new LinkedHashMap<>();
		Collection<SecurityWebFilterChain> chains = beanFactory
			.getBeansOfType(SecurityWebFilterChain.class, false, false)
			.values();
		if (chains.isEmpty() && beanFactory.getBeanNamesForType(WebFilterChainProxy.class, false, false).length > 0) {
			answered.put("/login", LoginPageGeneratingWebFilter.class.getSimpleName());
			answered.put("/logout", LogoutWebFilter.class.getSimpleName());
		}
		for (SecurityWebFilterChain chain : chains) {
			// a chain lists the filters it was built with: asked at startup, the answer is at hand
			for (WebFilter filter : chain.getWebFilters().toIterable()) {
				String path = defaultPath(filter);
				if (path != null) {
					answered.putIfAbsent(path, filter.getClass().getSimpleName());
				}
			}
		}
		return answered;
	}

	private static @Nullable String defaultPath(WebFilter filter) {
		if (filter instanceof LoginPageGeneratingWebFilter) {
			return "/login";
		}
		if (filter instanceof LogoutWebFilter || filter instanceof LogoutPageGeneratingWebFilter) {
			return "/logout";
		}
		return null;
	}

}
