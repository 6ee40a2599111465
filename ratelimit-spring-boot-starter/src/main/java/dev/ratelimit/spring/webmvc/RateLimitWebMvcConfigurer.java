package dev.ratelimit.spring.webmvc;

import org.springframework.web.servlet.config.annotation.InterceptorRegistry;
import org.springframework.web.servlet.config.annotation.WebMvcConfigurer;

/**
 * Registers the {@link RateLimitInterceptor} for every handler.
 */
final class RateLimitWebMvcConfigurer implements WebMvcConfigurer {

	private final RateLimitInterceptor interceptor;

	RateLimitWebMvcConfigurer(RateLimitInterceptor interceptor) {
		this.interceptor = interceptor;
	}

	@Override
	public void addInterceptors(InterceptorRegistry registry) {
		registry.addInterceptor(this.interceptor);
	}

}
