package dev.ratelimit.spring.webmvc;

import java.io.IOException;

import dev.ratelimit.spring.web.internal.LimitCatalog;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import org.springframework.web.cors.CorsUtils;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * Decides the {@code ratelimit.rules} marked {@code before-security} in a servlet filter ordered before Spring
 * Security's filter chain, so that they limit what Spring Security answers itself, such as {@code /login} or a
 * wrong HTTP Basic password. It decides as the {@link RateLimitInterceptor} does, through
 * {@link ServletDecisions}, with the client address resolved the same way; no handler and no user are known
 * yet. A rule that counts only some statuses is settled when the rest of the chain has answered, or, for an
 * asynchronous request, when it completes.
 * <p>
 * Each request is decided once, on its first dispatch: error and asynchronous dispatches are not filtered, and
 * neither are CORS pre-flight requests.
 */
final class RateLimitFilter extends OncePerRequestFilter {

	private static final String RESERVATION = RateLimitFilter.class.getName() + ".RESERVATION";

	private final LimitCatalog catalog;

	private final ServletDecisions decisions;

	RateLimitFilter(LimitCatalog catalog, ServletDecisions decisions) {
		this.catalog = catalog;
		this.decisions = decisions;
	}

	@Override
	protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
			throws ServletException, IOException {
		ServletLimitedRequest limited = new ServletLimitedRequest(request);
		LimitCatalog.Match match = CorsUtils.isPreFlightRequest(request) ? null
				: this.catalog.findBeforeSecurity(limited);
		if (match == null) {
			chain.doFilter(request, response);
			return;
		}
		if (!this.decisions.decide(limited, response, match, RESERVATION)) {
			this.decisions.settle(request, response, null, RESERVATION);
			return;
		}
		Throwable failure = null;
		try {
			chain.doFilter(request, response);
		}
		catch (IOException | ServletException | RuntimeException | Error ex) {
			failure = ex;
			throw ex;
		}
		finally {
			this.decisions.settle(request, response, failure, RESERVATION);
		}
	}

}
