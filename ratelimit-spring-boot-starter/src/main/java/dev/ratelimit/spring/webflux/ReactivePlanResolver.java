package dev.ratelimit.spring.webflux;

import reactor.core.publisher.Mono;

import org.springframework.web.server.ServerWebExchange;

/**
 * Tells which plan a request's client is on in a WebFlux application, for limits that declare
 * {@link dev.ratelimit.spring.RateLimited#plans() plans}: the reactive counterpart of
 * {@link dev.ratelimit.spring.PlanResolver}, of which the application has one bean.
 * <p>
 * Derive the plan from what the application trusts, such as the authenticated principal or an API key it has
 * looked up, not from a header the client could set to any plan. It must never block.
 */
@FunctionalInterface
public interface ReactivePlanResolver {

	/**
	 * Returns the plan of {@code exchange}.
	 * @param exchange the exchange being limited
	 * @return the plan, or an empty {@code Mono} for the declaration's own limits
	 */
	Mono<String> resolve(ServerWebExchange exchange);

}
