package dev.ratelimit.spring.webflux;

import reactor.core.publisher.Mono;

import org.springframework.web.server.ServerWebExchange;

/**
 * Tells which plan a request's client is on in a WebFlux application, for limits that declare
 * {@link dev.ratelimit.spring.RateLimited#plans() plans}: the reactive counterpart of
 * {@link dev.ratelimit.spring.PlanResolver}, of which the application has one bean.
 * <p>
 * Derive the plan from what the application trusts, such as the authenticated principal or an API key it has
 * looked up, not from a header the client could set to any plan. As there, an empty {@code Mono} is a client the
 * application does not recognise, keyed by its address under the declaration's own limits, and
 * {@link dev.ratelimit.spring.PlanResolver#NO_PLAN} a recognised client on them. It must never block.
 */
@FunctionalInterface
public interface ReactivePlanResolver {

	/**
	 * Returns the plan of {@code exchange}.
	 * @param exchange the exchange being limited
	 * @return the plan; {@link dev.ratelimit.spring.PlanResolver#NO_PLAN} for the declaration's own limits; an
	 * empty {@code Mono} for a client the application does not recognise
	 */
	Mono<String> resolve(ServerWebExchange exchange);

}
