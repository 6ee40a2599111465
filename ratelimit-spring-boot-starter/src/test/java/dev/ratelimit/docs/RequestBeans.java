package dev.ratelimit.docs;

import dev.ratelimit.spring.KeyResolver;
import dev.ratelimit.spring.RateLimitExceededHandler;
import dev.ratelimit.spring.RateLimitExemption;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.ProblemDetail;

/**
 * The beans of an application's own that the documentation declares: a key, an exemption and the body of a 429.
 */
@Configuration(proxyBeanMethods = false)
class RequestBeans {

	@Bean
	KeyResolver apiKeyResolver() {
		return (request) -> request.getHeader("X-Key");
	}

	@Bean
	RateLimitExemption internal() {
		return (request) -> "yes".equals(request.getHeader("X-Internal"));
	}

	@Bean
	RateLimitExceededHandler rateLimitExceededHandler() {
		return (request, rejection) -> {
			ProblemDetail problem = rejection.toProblemDetail();
			problem.setProperty("path", request.getRequestURI());
			return problem;
		};
	}

}
