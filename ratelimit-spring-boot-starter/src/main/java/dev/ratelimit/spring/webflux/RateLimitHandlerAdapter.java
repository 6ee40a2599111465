package dev.ratelimit.spring.webflux;

import java.util.List;
import java.util.Map;

import dev.ratelimit.spring.web.internal.LimitCatalog;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.core.Ordered;
import org.springframework.web.cors.reactive.CorsUtils;
import org.springframework.web.reactive.HandlerAdapter;
import org.springframework.web.reactive.HandlerMapping;
import org.springframework.web.reactive.HandlerResult;
import org.springframework.web.server.ServerWebExchange;

/**
 * Decides every request to a limited endpoint once WebFlux has found its handler and before the handler runs:
 * after every {@code WebFilter}, Spring Security's included, so the user is known, as Spring MVC's interceptor
 * does. It stands first among the handler adapters, supports every handler another adapter supports, and hands
 * the request on to that adapter unless its limits answer it: annotated controllers and functional endpoints
 * alike, the latter limited by rule.
 * <p>
 * CORS pre-flight requests, which browsers send on their own before the real request, are not limited; nor are
 * the requests that an exemption exempts, which get no rate limit headers.
 */
final class RateLimitHandlerAdapter implements HandlerAdapter, Ordered {

	private final LimitCatalog catalog;

	private final ExchangeDecisions decisions;

	private final ObjectProvider<HandlerAdapter> adapters;

	private volatile @Nullable List<HandlerAdapter> others;

	RateLimitHandlerAdapter(LimitCatalog catalog, ExchangeDecisions decisions, ObjectProvider<HandlerAdapter> adapters) {
		this.catalog = catalog;
		this.decisions = decisions;
		this.adapters = adapters;
	}

	@Override
	public int getOrder() {
		return Ordered.HIGHEST_PRECEDENCE;
	}

	@Override
	public boolean supports(Object handler) {
		return delegate(handler) != null;
	}

	@Override
	public Mono<HandlerResult> handle(ServerWebExchange exchange, Object handler) {
		HandlerAdapter delegate = delegate(handler);
		if (delegate == null) {
			return Mono.error(new IllegalStateException("No adapter for handler " + handler));
		}
		Mono<HandlerResult> proceed = Mono.defer(() -> delegate.handle(exchange, handler));
		if (CorsUtils.isPreFlightRequest(exchange.getRequest())) {
			return proceed;
		}
		ExchangeLimitedRequest request = new ExchangeLimitedRequest(exchange);
		LimitCatalog.Match match = this.catalog.find(request, handler, () -> uriVariables(exchange));
		if (match == null) {
			return proceed;
		}
		return this.decisions.decide(request, match, proceed);
	}

	/** The first of the other handler adapters that supports the handler. */
	private @Nullable HandlerAdapter delegate(Object handler) {
		List<HandlerAdapter> others = this.others;
		if (others == null) {
			others = this.adapters.orderedStream().filter((adapter) -> adapter != this).toList();
			this.others = others;
		}
		for (HandlerAdapter adapter : others) {
			if (adapter.supports(handler)) {
				return adapter;
			}
		}
		return null;
	}

	private static Map<String, String> uriVariables(ServerWebExchange exchange) {
		Map<String, String> variables = exchange.getAttribute(HandlerMapping.URI_TEMPLATE_VARIABLES_ATTRIBUTE);
		return (variables != null) ? variables : Map.of();
	}

}
