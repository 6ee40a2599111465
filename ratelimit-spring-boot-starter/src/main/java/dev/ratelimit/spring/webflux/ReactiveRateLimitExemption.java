package dev.ratelimit.spring.webflux;

import reactor.core.publisher.Mono;

import org.springframework.web.server.ServerWebExchange;

/**
 * Decides whether a request of a WebFlux application is exempt from rate limiting, named by
 * {@code ratelimit.exempt-if=bean:<name>} or {@code ratelimit.policies.<name>.exempt-if=bean:<name>}: the
 * reactive counterpart of {@link dev.ratelimit.spring.RateLimitExemption}. It runs before every request to a
 * limited endpoint and must never block.
 */
@FunctionalInterface
public interface ReactiveRateLimitExemption {

	/**
	 * Returns whether {@code exchange} is exempt.
	 * @param exchange the exchange
	 * @return true to let the request through without counting it; empty counts as false
	 */
	Mono<Boolean> isExempt(ServerWebExchange exchange);

}
