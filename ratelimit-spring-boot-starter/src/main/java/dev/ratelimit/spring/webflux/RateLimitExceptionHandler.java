package dev.ratelimit.spring.webflux;

import dev.ratelimit.spring.RateLimitExceededException;
import reactor.core.publisher.Mono;

import org.springframework.core.Ordered;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebExceptionHandler;

/**
 * Answers a {@link RateLimitExceededException} that left a handler, raised by a limited bean method it called,
 * with the 429 of a limited handler; ordered before Spring Boot's error handler, and after the application's
 * {@code @ExceptionHandler} methods, which WebFlux runs within the handler's dispatch.
 */
final class RateLimitExceptionHandler implements WebExceptionHandler, Ordered {

	/** Before Spring Boot's {@code ErrorWebExceptionHandler}, at -1. */
	static final int ORDER = -2;

	private final ExchangeDecisions decisions;

	RateLimitExceptionHandler(ExchangeDecisions decisions) {
		this.decisions = decisions;
	}

	@Override
	public Mono<Void> handle(ServerWebExchange exchange, Throwable ex) {
		if (!(ex instanceof RateLimitExceededException exceeded) || exchange.getResponse().isCommitted()) {
			return Mono.error(ex);
		}
		return this.decisions.reject(exchange, exceeded);
	}

	@Override
	public int getOrder() {
		return ORDER;
	}

}
