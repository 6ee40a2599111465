package dev.ratelimit.spring.webflux;

import dev.ratelimit.spring.web.internal.LimitCatalog;
import reactor.core.publisher.Mono;

import org.springframework.core.Ordered;
import org.springframework.web.cors.reactive.CorsUtils;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;

/**
 * Decides the {@code ratelimit.rules} marked {@code before-security} in a {@code WebFilter} ordered before
 * Spring Security's, so that they limit what Spring Security answers itself, such as a login or a wrong HTTP
 * Basic password. It decides as the {@link RateLimitHandlerAdapter} does, with the client address resolved the
 * same way; no handler and no user are known yet. CORS pre-flight requests are not limited. It also gives back,
 * once each exchange has ended, the permits in flight that any of its limits took.
 */
final class RateLimitWebFilter implements WebFilter, Ordered {

	private final LimitCatalog catalog;

	private final ExchangeDecisions decisions;

	RateLimitWebFilter(LimitCatalog catalog, ExchangeDecisions decisions) {
		this.catalog = catalog;
		this.decisions = decisions;
	}

	@Override
	public int getOrder() {
		return RateLimitWebFluxAutoConfiguration.FILTER_ORDER;
	}

	@Override
	public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
		if (CorsUtils.isPreFlightRequest(exchange.getRequest())) {
			return chain.filter(exchange);
		}
		ExchangeLimitedRequest request = new ExchangeLimitedRequest(exchange);
		LimitCatalog.Match match = this.catalog.findBeforeSecurity(request);
		Mono<Void> handled = (match != null)
				? this.decisions.decide(request, match, Mono.defer(() -> chain.filter(exchange)))
				: chain.filter(exchange);
		return this.decisions.releasingAtTheEnd(exchange, handled);
	}

}
