package dev.ratelimit.spring.webflux;

import reactor.core.publisher.Mono;

import org.springframework.web.server.ServerWebExchange;

/**
 * Tells who a request comes from, for limits declared with {@code key = "bean:<name>"} in a WebFlux
 * application, where {@code <name>} is the name of a bean implementing this interface: the reactive
 * counterpart of {@link dev.ratelimit.spring.KeyResolver}.
 * <p>
 * The key is resolved before the request is decided, and may come from a non-blocking look-up; the resolver
 * must never block. Long keys and keys with characters that do not belong in a store key are hashed before they
 * reach the store.
 */
@FunctionalInterface
public interface ReactiveKeyResolver {

	/**
	 * Returns the key of {@code exchange}.
	 * @param exchange the exchange being limited
	 * @return the key, or an empty {@code Mono} to fall back to the client address
	 */
	Mono<String> resolve(ServerWebExchange exchange);

}
