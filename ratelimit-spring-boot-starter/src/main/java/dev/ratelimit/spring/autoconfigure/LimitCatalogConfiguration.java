package dev.ratelimit.spring.autoconfigure;

import dev.ratelimit.core.RateLimitStore;
import dev.ratelimit.core.TimeSource;
import dev.ratelimit.spring.RateLimiters;
import dev.ratelimit.spring.changes.internal.PolicyChanges;
import dev.ratelimit.spring.observability.internal.PolicyPlans;
import dev.ratelimit.spring.web.internal.CatalogLimiters;
import dev.ratelimit.spring.web.internal.ClientAddresses;
import dev.ratelimit.spring.web.internal.LimitCatalog;
import dev.ratelimit.spring.web.internal.LimitSettings;
import dev.ratelimit.spring.web.internal.NoWebStack;
import dev.ratelimit.spring.web.internal.RequestDecisions;
import dev.ratelimit.spring.web.internal.WebStack;

import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The catalog of an application's limits, built the same way on either web stack from the {@link WebStack} bean
 * that the stack's auto-configuration declares, or without one where no web stack serves the application, and
 * the {@link RateLimiters} of its policies for code.
 */
@Configuration(proxyBeanMethods = false)
final class LimitCatalogConfiguration {

	@Bean
	@ConditionalOnMissingBean
	LimitCatalog rateLimitCatalog(ObjectProvider<WebStack> stack, LimitSettings settings, ListableBeanFactory beanFactory,
			RateLimitStore store, ClientAddresses clientAddresses, TimeSource timeSource, PolicyPlans policyPlans,
			PolicyChanges changes) {
		return new LimitCatalog(settings, stack.getIfAvailable(NoWebStack::new), store, beanFactory, clientAddresses,
				timeSource, policyPlans, changes);
	}

	@Bean
	@ConditionalOnMissingBean
	RateLimiters rateLimiters(LimitCatalog catalog, RequestDecisions decisions, PolicyChanges changes,
			TimeSource timeSource) {
		return new CatalogLimiters(catalog, decisions, changes, timeSource);
	}

}
