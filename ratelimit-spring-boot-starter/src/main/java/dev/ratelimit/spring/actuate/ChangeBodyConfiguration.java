package dev.ratelimit.spring.actuate;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.actuate.autoconfigure.web.ManagementContextConfiguration;
import org.springframework.boot.actuate.autoconfigure.web.ManagementContextType;
import org.springframework.boot.actuate.endpoint.EndpointId;
import org.springframework.boot.actuate.endpoint.web.PathMappedEndpoints;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Puts {@link ChangeBodies}' check in front of the {@code ratelimit} endpoint's changes, on the server that serves
 * the Actuator, the application's or a management port of its own: a servlet filter, or a WebFlux filter.
 */
@ManagementContextConfiguration(value = ManagementContextType.ANY, proxyBeanMethods = false)
@ConditionalOnClass(name = "tools.jackson.core.JsonParser")
@ConditionalOnBean({ RateLimitEndpoint.class, PathMappedEndpoints.class })
class ChangeBodyConfiguration {

	private static final EndpointId ENDPOINT = EndpointId.of("ratelimit");

	/** The endpoint's path on the Actuator's server, null if it is not exposed over the web. */
	private static @Nullable String path(PathMappedEndpoints endpoints) {
		return endpoints.getPath(ENDPOINT);
	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
	static class Servlet {

		@Bean
		FilterRegistrationBean<ChangeBodyFilter> rateLimitChangeBodyFilter(PathMappedEndpoints endpoints) {
			FilterRegistrationBean<ChangeBodyFilter> registration = new FilterRegistrationBean<>(
					new ChangeBodyFilter());
			String path = path(endpoints);
			if (path != null) {
				registration.addUrlPatterns(path + "/*");
			}
			else {
				registration.setEnabled(false);
			}
			return registration;
		}

	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
	static class Reactive {

		@Bean
		ChangeBodyWebFilter rateLimitChangeBodyWebFilter(PathMappedEndpoints endpoints) {
			return new ChangeBodyWebFilter(path(endpoints));
		}

	}

}
