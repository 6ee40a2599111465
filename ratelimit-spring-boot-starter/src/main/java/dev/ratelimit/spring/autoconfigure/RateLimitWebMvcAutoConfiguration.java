package dev.ratelimit.spring.autoconfigure;

import dev.ratelimit.core.RateLimitStore;
import dev.ratelimit.spring.RateLimitExceededHandler;

import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication.Type;
import org.springframework.context.annotation.Bean;
import org.springframework.web.servlet.config.annotation.WebMvcConfigurer;
import org.springframework.web.servlet.mvc.method.annotation.RequestMappingHandlerAdapter;
import org.springframework.web.servlet.mvc.method.annotation.RequestMappingHandlerMapping;

/**
 * Auto-configuration of rate limiting for Spring MVC: a {@link org.springframework.web.servlet.HandlerInterceptor}
 * enforcing {@link dev.ratelimit.spring.RateLimited} and {@code ratelimit.rules}, registered through a
 * {@link WebMvcConfigurer}.
 */
@AutoConfiguration(after = RateLimitAutoConfiguration.class)
@ConditionalOnWebApplication(type = Type.SERVLET)
@ConditionalOnClass(WebMvcConfigurer.class)
@ConditionalOnBooleanProperty(name = "ratelimit.enabled", matchIfMissing = true)
public final class RateLimitWebMvcAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	LimitCatalog rateLimitCatalog(RateLimitProperties properties, BeanFactory beanFactory,
			ObjectProvider<RequestMappingHandlerMapping> handlerMappings, RateLimitStore store) {
		return new LimitCatalog(new LimitDefinitions(properties, beanFactory), handlerMappings, store);
	}

	@Bean
	@ConditionalOnMissingBean(RateLimitExceededHandler.class)
	DefaultRateLimitExceededHandler rateLimitExceededHandler() {
		return new DefaultRateLimitExceededHandler();
	}

	@Bean
	@ConditionalOnMissingBean
	RateLimitInterceptor rateLimitInterceptor(LimitCatalog catalog, RateLimitStore store,
			RateLimitExceededHandler exceededHandler, ObjectProvider<RateLimitMetrics> metrics,
			RateLimitProperties properties, ObjectProvider<RequestMappingHandlerAdapter> handlerAdapters) {
		return new RateLimitInterceptor(catalog, store, exceededHandler,
				metrics.getIfAvailable(() -> RateLimitMetrics.NONE), properties.getHeaders().isLegacy(),
				handlerAdapters);
	}

	@Bean
	@ConditionalOnMissingBean
	RateLimitWebMvcConfigurer rateLimitWebMvcConfigurer(RateLimitInterceptor interceptor) {
		return new RateLimitWebMvcConfigurer(interceptor);
	}

}
