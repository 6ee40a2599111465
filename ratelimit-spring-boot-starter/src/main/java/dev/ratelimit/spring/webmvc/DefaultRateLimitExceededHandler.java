package dev.ratelimit.spring.webmvc;

import dev.ratelimit.spring.RateLimitExceededHandler;
import dev.ratelimit.spring.RateLimitRejection;
import jakarta.servlet.http.HttpServletRequest;

import org.springframework.http.ProblemDetail;

/**
 * Answers a rejected request with {@link RateLimitRejection#toProblemDetail()}.
 */
final class DefaultRateLimitExceededHandler implements RateLimitExceededHandler {

	@Override
	public ProblemDetail problemDetail(HttpServletRequest request, RateLimitRejection rejection) {
		return rejection.toProblemDetail();
	}

}
