package dev.ratelimit.spring.webmvc;

import java.io.IOException;
import java.util.Map;

import dev.ratelimit.spring.web.internal.Exemption;
import dev.ratelimit.spring.web.internal.LimitCatalog;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.jspecify.annotations.Nullable;

import org.springframework.web.cors.CorsUtils;
import org.springframework.web.servlet.HandlerInterceptor;
import org.springframework.web.servlet.HandlerMapping;

/**
 * Decides every request to a limited endpoint before its handler runs: after the servlet filters, Spring
 * Security's included, so the user is known. It writes the rate limit headers on every response of a limited
 * endpoint and answers a rejected request itself with 429, {@code Retry-After} and a problem body, through
 * {@link ServletDecisions}. A request that a leaky bucket admitted with a delay is {@link HeldRequests held}
 * until its slot, then dispatched again to its handler; its headers are written when it is decided, like those
 * of any other request. Rules decided before Spring Security are the {@link RateLimitFilter}'s, not its.
 * <p>
 * A request is decided once: error dispatches are never limited, and neither is the re-dispatch of an
 * asynchronous or held request nor a forward after the request was decided. CORS pre-flight requests, which
 * browsers send on their own before the real request, are not limited either, and neither are the requests
 * that an {@link Exemption} exempts: those get no rate limit headers.
 */
final class RateLimitInterceptor implements HandlerInterceptor {

	private static final String DECIDED = RateLimitInterceptor.class.getName() + ".DECIDED";

	private static final String RESERVATION = RateLimitInterceptor.class.getName() + ".RESERVATION";

	private final LimitCatalog catalog;

	private final ServletDecisions decisions;

	RateLimitInterceptor(LimitCatalog catalog, ServletDecisions decisions) {
		this.catalog = catalog;
		this.decisions = decisions;
	}

	@Override
	public boolean preHandle(HttpServletRequest request, HttpServletResponse response, Object handler)
			throws IOException {
		if (request.getDispatcherType() == DispatcherType.ERROR || request.getAttribute(DECIDED) != null
				|| CorsUtils.isPreFlightRequest(request)) {
			return true;
		}
		ServletLimitedRequest limited = new ServletLimitedRequest(request);
		LimitCatalog.Match match = this.catalog.find(limited, handler, () -> uriVariables(request));
		if (match == null) {
			return true;
		}
		request.setAttribute(DECIDED, Boolean.TRUE);
		return this.decisions.decide(limited, response, match, RESERVATION);
	}

	@SuppressWarnings("unchecked")
	private static Map<String, String> uriVariables(HttpServletRequest request) {
		Object variables = request.getAttribute(HandlerMapping.URI_TEMPLATE_VARIABLES_ATTRIBUTE);
		return (variables != null) ? (Map<String, String>) variables : Map.of();
	}

	/** Settles a request decided by limits that count only some outcomes, now that its status is known. */
	@Override
	public void afterCompletion(HttpServletRequest request, HttpServletResponse response, Object handler,
			@Nullable Exception ex) {
		this.decisions.settle(request, response, ex, RESERVATION);
	}

}
