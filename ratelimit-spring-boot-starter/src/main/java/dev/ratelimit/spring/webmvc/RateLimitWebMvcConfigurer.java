package dev.ratelimit.spring.webmvc;

import java.util.List;

import org.springframework.web.servlet.HandlerExceptionResolver;
import org.springframework.web.servlet.config.annotation.InterceptorRegistry;
import org.springframework.web.servlet.config.annotation.WebMvcConfigurer;

/**
 * Registers the {@link RateLimitInterceptor} for every handler, and the {@link RateLimitExceptionResolver} after
 * Spring MVC's own resolvers.
 */
final class RateLimitWebMvcConfigurer implements WebMvcConfigurer {

	private final RateLimitInterceptor interceptor;

	private final RateLimitExceptionResolver exceptionResolver;

	RateLimitWebMvcConfigurer(RateLimitInterceptor interceptor, RateLimitExceptionResolver exceptionResolver) {
		this.interceptor = interceptor;
		this.exceptionResolver = exceptionResolver;
	}

	@Override
	public void addInterceptors(InterceptorRegistry registry) {
		registry.addInterceptor(this.interceptor);
	}

	@Override
	public void extendHandlerExceptionResolvers(List<HandlerExceptionResolver> resolvers) {
		resolvers.add(this.exceptionResolver);
	}

}
