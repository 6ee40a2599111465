package dev.ratelimit.spring;

import jakarta.servlet.http.HttpServletRequest;

import org.springframework.http.ProblemDetail;

/**
 * Builds the {@code application/problem+json} body of a request rejected for exceeding its limits. Declare a
 * bean of this type to replace the default body, {@link RateLimitRejection#toProblemDetail()}; the status is
 * taken from the returned problem. The {@code Retry-After}, {@code RateLimit-Policy} and {@code RateLimit}
 * headers are written in any case.
 */
@FunctionalInterface
public interface RateLimitExceededHandler {

	/**
	 * Returns the body of the response to a rejected request.
	 * @param request the rejected request
	 * @param rejection the limits that rejected it and how long to wait
	 * @return the problem to write
	 */
	ProblemDetail problemDetail(HttpServletRequest request, RateLimitRejection rejection);

}
