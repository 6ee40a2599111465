package dev.ratelimit.spring.autoconfigure;

import dev.ratelimit.core.RateLimitStore;
import dev.ratelimit.spring.actuate.RateLimitEndpoint;
import dev.ratelimit.spring.actuate.RateLimitEndpointWebExtension;
import dev.ratelimit.spring.changes.internal.PolicyChanges;
import dev.ratelimit.spring.web.internal.LimitCatalog;

import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

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
			RateLimitProperties properties) {
		return new RateLimitEndpoint(catalog, changes, store, RateLimitAutoConfiguration.storeName(properties));
	}

	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnBean(RateLimitEndpoint.class)
	RateLimitEndpointWebExtension rateLimitEndpointWebExtension(RateLimitEndpoint endpoint) {
		return new RateLimitEndpointWebExtension(endpoint);
	}

}
