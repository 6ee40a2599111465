package dev.ratelimit.spring.autoconfigure;

import dev.ratelimit.core.RateLimitStore;
import dev.ratelimit.spring.actuate.RateLimitEndpoint;
import dev.ratelimit.spring.actuate.RateLimitEndpointWebExtension;
import dev.ratelimit.spring.changes.internal.PolicyChanges;
import dev.ratelimit.spring.web.internal.ClientLimits;
import dev.ratelimit.spring.web.internal.LimitCatalog;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.autoconfigure.endpoint.expose.EndpointExposure;
import org.springframework.boot.actuate.endpoint.Access;
import org.springframework.boot.actuate.endpoint.EndpointAccessResolver;
import org.springframework.boot.actuate.endpoint.EndpointId;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingClass;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;

/**
 * Auto-configuration of the {@link RateLimitEndpoint ratelimit} Actuator endpoint, when Actuator is present and
 * the endpoint is available (exposed, and not switched off with {@code management.endpoint.ratelimit.access}).
 * It follows the web stacks' auto-configurations, named rather than referenced, since they follow this package's
 * {@link RateLimitAutoConfiguration}: each stack's catalog of limits is what the endpoint operates.
 */
@AutoConfiguration(afterName = { "dev.ratelimit.spring.webmvc.RateLimitWebMvcAutoConfiguration",
		"dev.ratelimit.spring.webflux.RateLimitWebFluxAutoConfiguration" })
@ConditionalOnClass(Endpoint.class)
@ConditionalOnBean(LimitCatalog.class)
@ConditionalOnAvailableEndpoint(RateLimitEndpoint.class)
public final class RateLimitEndpointAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	RateLimitEndpoint rateLimitEndpoint(LimitCatalog catalog, PolicyChanges changes, RateLimitStore store,
			RateLimitProperties properties, ObjectProvider<ClientLimits> clientLimits, Environment environment,
			ConfigurableListableBeanFactory beans) {
		return new RateLimitEndpoint(catalog, changes, store,
				RateLimitAutoConfiguration.storeName(properties, environment, beans),
				clientLimits.getIfAvailable());
	}

	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnBean(RateLimitEndpoint.class)
	RateLimitEndpointWebExtension rateLimitEndpointWebExtension(RateLimitEndpoint endpoint) {
		return new RateLimitEndpointWebExtension(endpoint);
	}

	/**
	 * Warns once at startup when the endpoint's write operations, which change policies and reset clients, are
	 * exposed over HTTP in an application without Spring Security: whoever reaches the port could lift every
	 * limit.
	 */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnAvailableEndpoint(endpoint = RateLimitEndpoint.class, exposure = EndpointExposure.WEB)
	@ConditionalOnMissingClass("org.springframework.security.web.SecurityFilterChain")
	static final class UnsecuredWritesWarning {

		private static final Log logger = LogFactory.getLog(RateLimitEndpoint.class);

		@Bean
		static SmartInitializingSingleton rateLimitEndpointUnsecuredWritesWarning(
				ObjectProvider<EndpointAccessResolver> access) {
			return () -> {
				EndpointAccessResolver resolver = access.getIfAvailable();
				Access granted = (resolver != null)
						? resolver.accessFor(EndpointId.of(RateLimitEndpoint.ID), Access.UNRESTRICTED)
						: Access.UNRESTRICTED;
				if (granted == Access.UNRESTRICTED) {
					logger.warn("The ratelimit endpoint is exposed over HTTP with its write operations, which change "
							+ "a policy and reset a client, and the application has no Spring Security: whoever "
							+ "reaches it can lift every limit. Secure the endpoint, or set "
							+ "management.endpoint.ratelimit.access=read-only.");
				}
			};
		}

	}

}
