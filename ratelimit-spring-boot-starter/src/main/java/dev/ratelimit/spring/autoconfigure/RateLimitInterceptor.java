package dev.ratelimit.spring.autoconfigure;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

import dev.ratelimit.core.Decision;
import dev.ratelimit.core.KeyedPolicy;
import dev.ratelimit.core.RateLimitStore;
import dev.ratelimit.spring.RateLimitExceededHandler;
import dev.ratelimit.spring.RateLimitRejection;
import dev.ratelimit.spring.autoconfigure.RateLimitMetrics.Outcome;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.http.MediaType;
import org.springframework.http.ProblemDetail;
import org.springframework.http.converter.HttpMessageConverter;
import org.springframework.http.server.ServletServerHttpResponse;
import org.springframework.web.cors.CorsUtils;
import org.springframework.web.servlet.HandlerInterceptor;
import org.springframework.web.servlet.mvc.method.annotation.RequestMappingHandlerAdapter;

/**
 * Decides every request to a limited endpoint before its handler runs: after the servlet filters, Spring
 * Security's included, so the user is known. It writes the rate limit headers on every response of a limited
 * endpoint and answers a rejected request itself with 429, {@code Retry-After} and a problem body. A request
 * that a leaky bucket admitted with a delay is {@link HeldRequests held} until its slot, then dispatched again
 * to its handler; its headers are written when it is decided, like those of any other request.
 * <p>
 * A request is decided once: error dispatches are never limited, and neither is the re-dispatch of an
 * asynchronous or held request nor a forward after the request was decided. CORS pre-flight requests, which
 * browsers send on their own before the real request, are not limited either, and neither are the requests
 * that an {@link Exemption} exempts: those get no rate limit headers.
 */
final class RateLimitInterceptor implements HandlerInterceptor {

	private static final String DECIDED = RateLimitInterceptor.class.getName() + ".DECIDED";

	private final LimitCatalog catalog;

	private final RateLimitStore store;

	private final RateLimitExceededHandler exceededHandler;

	private final RateLimitMetrics metrics;

	private final boolean legacyHeaders;

	private final HeldRequests heldRequests;

	private final ObjectProvider<RequestMappingHandlerAdapter> handlerAdapters;

	private final UnresolvedKeys unresolvedKeys;

	private volatile @Nullable HttpMessageConverter<Object> problemConverter;

	RateLimitInterceptor(LimitCatalog catalog, RateLimitStore store, RateLimitExceededHandler exceededHandler,
			RateLimitMetrics metrics, boolean legacyHeaders, HeldRequests heldRequests,
			ObjectProvider<RequestMappingHandlerAdapter> handlerAdapters, UnresolvedKeys unresolvedKeys) {
		this.catalog = catalog;
		this.store = store;
		this.exceededHandler = exceededHandler;
		this.metrics = metrics;
		this.legacyHeaders = legacyHeaders;
		this.heldRequests = heldRequests;
		this.handlerAdapters = handlerAdapters;
		this.unresolvedKeys = unresolvedKeys;
	}

	@Override
	public boolean preHandle(HttpServletRequest request, HttpServletResponse response, Object handler)
			throws IOException {
		if (request.getDispatcherType() == DispatcherType.ERROR || request.getAttribute(DECIDED) != null
				|| CorsUtils.isPreFlightRequest(request)) {
			return true;
		}
		LimitCatalog.Match match = this.catalog.find(request, handler);
		if (match == null) {
			return true;
		}
		request.setAttribute(DECIDED, Boolean.TRUE);
		EndpointLimits limits = match.limits();
		if (limits.exemption().applies(request)) {
			this.metrics.exempt(limits.policies());
			return true;
		}
		List<KeyedPolicy> keyed = keyed(request, match);
		long start = System.nanoTime();
		List<Decision> decisions = this.store.decideAll(keyed);
		long elapsed = System.nanoTime() - start;
		RateLimitHeaders.write(response, limits, decisions, this.legacyHeaders);
		if (!decisions.get(0).allowed()) {
			this.metrics.record(limits.policies(), Outcome.REJECTED, elapsed);
			reject(request, response, new RateLimitRejection(limits.policies(), decisions));
			return false;
		}
		long delay = delay(decisions);
		if (delay == 0) {
			this.metrics.record(limits.policies(), Outcome.ALLOWED, elapsed);
			return true;
		}
		this.metrics.record(limits.policies(), Outcome.DELAYED, elapsed);
		this.heldRequests.hold(request, response, delay);
		return false;
	}

	/** Each policy with its key, computed once for the policies that share a key source. */
	private List<KeyedPolicy> keyed(HttpServletRequest request, LimitCatalog.Match match) {
		EndpointLimits limits = match.limits();
		List<KeySource> sources = limits.keys();
		List<KeyedPolicy> keyed = new ArrayList<>(sources.size());
		for (int i = 0; i < sources.size(); i++) {
			@Nullable String key = null;
			for (int j = 0; j < i && key == null; j++) {
				if (sources.get(j) == sources.get(i)) {
					key = keyed.get(j).key();
				}
			}
			if (key == null) {
				key = Keys.safe(this.unresolvedKeys.key(request, match, i));
			}
			keyed.add(new KeyedPolicy(key, limits.policies().get(i)));
		}
		return keyed;
	}

	/** A request waits for the latest of its slots; only a leaky bucket gives one. */
	private static long delay(List<Decision> decisions) {
		long delay = 0;
		for (Decision decision : decisions) {
			delay = Math.max(delay, decision.delayNanos());
		}
		return delay;
	}

	private void reject(HttpServletRequest request, HttpServletResponse response, RateLimitRejection rejection)
			throws IOException {
		RateLimitHeaders.writeRetryAfter(response, rejection.retryAfterSeconds());
		ProblemDetail problem = this.exceededHandler.problemDetail(request, rejection);
		response.setStatus(problem.getStatus());
		HttpMessageConverter<Object> converter = problemConverter();
		if (converter != null) {
			try (ServletServerHttpResponse output = new ServletServerHttpResponse(response)) {
				converter.write(problem, MediaType.APPLICATION_PROBLEM_JSON, output);
			}
		}
	}

	/** The converter that Spring MVC itself would write a problem with, looked up at the first rejection. */
	@SuppressWarnings("unchecked")
	private @Nullable HttpMessageConverter<Object> problemConverter() {
		HttpMessageConverter<Object> converter = this.problemConverter;
		if (converter == null) {
			RequestMappingHandlerAdapter adapter = this.handlerAdapters.orderedStream().findFirst().orElse(null);
			if (adapter != null) {
				for (HttpMessageConverter<?> candidate : adapter.getMessageConverters()) {
					if (candidate.canWrite(ProblemDetail.class, MediaType.APPLICATION_PROBLEM_JSON)) {
						converter = (HttpMessageConverter<Object>) candidate;
						this.problemConverter = converter;
						break;
					}
				}
			}
		}
		return converter;
	}

}
