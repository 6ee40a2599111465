package dev.ratelimit.spring.autoconfigure;

import dev.ratelimit.core.RateLimitStore;
import dev.ratelimit.core.TimeSource;
import dev.ratelimit.spring.web.ClientAddresses;
import dev.ratelimit.spring.web.LimitCatalog;
import dev.ratelimit.spring.web.LimitDefinitions;
import dev.ratelimit.spring.web.PolicyChanges;
import dev.ratelimit.spring.web.PolicyOverrides;
import dev.ratelimit.spring.web.PolicyPlans;
import dev.ratelimit.spring.web.WebStack;

import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The catalog of an application's limits, built the same way on either web stack from the {@link WebStack} bean
 * that the stack's auto-configuration declares; imported by that auto-configuration, so that it exists only
 * where a web stack serves the application.
 */
@Configuration(proxyBeanMethods = false)
public final class LimitCatalogConfiguration {

	@Bean
	@ConditionalOnMissingBean
	LimitCatalog rateLimitCatalog(WebStack stack, RateLimitProperties properties, PolicyOverrides overrides,
			ListableBeanFactory beanFactory, RateLimitStore store, ClientAddresses clientAddresses,
			TimeSource timeSource, PolicyPlans policyPlans, PolicyChanges changes) {
		return new LimitCatalog(new LimitDefinitions(properties, overrides, beanFactory, stack.resolvers(),
				clientAddresses, timeSource, policyPlans), stack, store, beanFactory, changes);
	}

}
