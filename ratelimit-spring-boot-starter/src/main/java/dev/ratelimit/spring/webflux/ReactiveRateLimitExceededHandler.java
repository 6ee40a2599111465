package dev.ratelimit.spring.webflux;

import dev.ratelimit.spring.RateLimitRejection;

import org.springframework.http.ProblemDetail;
import org.springframework.web.server.ServerWebExchange;

/**
 * Builds the {@code application/problem+json} body of a request rejected for exceeding its limits in a
 * WebFlux application: the reactive counterpart of {@link dev.ratelimit.spring.RateLimitExceededHandler}.
 * Declare a bean of this type to replace the default body, {@link RateLimitRejection#toProblemDetail()}; the
 * status is taken from the returned problem. The {@code Retry-After}, {@code RateLimit-Policy} and
 * {@code RateLimit} headers are written in any case. It runs on the thread that decided and must not block.
 */
@FunctionalInterface
public interface ReactiveRateLimitExceededHandler {

	/**
	 * Returns the body of the response to a rejected request.
	 * @param exchange the rejected exchange
	 * @param rejection the limits that rejected it and how long to wait
	 * @return the problem to write
	 */
	ProblemDetail problemDetail(ServerWebExchange exchange, RateLimitRejection rejection);

}
