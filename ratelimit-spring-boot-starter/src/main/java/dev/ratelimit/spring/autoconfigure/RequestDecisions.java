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
import jakarta.servlet.AsyncEvent;
import jakarta.servlet.AsyncListener;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.http.MediaType;
import org.springframework.http.ProblemDetail;
import org.springframework.http.converter.HttpMessageConverter;
import org.springframework.http.server.ServletServerHttpResponse;
import org.springframework.web.servlet.mvc.method.annotation.RequestMappingHandlerAdapter;

/**
 * Decides one request against the limits it matched, wherever it is decided: in the Spring MVC interceptor or
 * in the servlet filter ahead of Spring Security. It writes the rate limit headers, answers a rejected request
 * itself with 429, {@code Retry-After} and a problem body, and {@link HeldRequests holds} a request that a leaky
 * bucket admitted with a delay. A request is decided under the limits of its client's plan, at its own cost; a
 * request whose cost its limits can never take is answered with 400 and takes nothing.
 * <p>
 * Limits that {@link CountedOutcomes count only some outcomes} take their permits before the request runs, so
 * that a client that has spent its quota is refused before any work is done and concurrent requests never take
 * more than the limit; once the request is {@link #settle settled}, a response whose status does not count gives
 * its permits back. Such limits write their headers only on a rejection: an allowed request's permits may be
 * given back, so no header written before it runs could tell what is left.
 */
final class RequestDecisions {

	private final RateLimitStore store;

	private final RateLimitExceededHandler exceededHandler;

	private final RateLimitMetrics metrics;

	private final boolean legacyHeaders;

	private final HeldRequests heldRequests;

	private final ObjectProvider<RequestMappingHandlerAdapter> handlerAdapters;

	private final UnresolvedKeys unresolvedKeys;

	private final PolicyChanges changes;

	private volatile @Nullable HttpMessageConverter<Object> problemConverter;

	RequestDecisions(RateLimitStore store, RateLimitExceededHandler exceededHandler, RateLimitMetrics metrics,
			boolean legacyHeaders, HeldRequests heldRequests,
			ObjectProvider<RequestMappingHandlerAdapter> handlerAdapters, UnresolvedKeys unresolvedKeys,
			PolicyChanges changes) {
		this.store = store;
		this.exceededHandler = exceededHandler;
		this.metrics = metrics;
		this.legacyHeaders = legacyHeaders;
		this.heldRequests = heldRequests;
		this.handlerAdapters = handlerAdapters;
		this.unresolvedKeys = unresolvedKeys;
		this.changes = changes;
	}

	/**
	 * Decides the request unless it is exempt; returns whether it proceeds now, false when it was rejected or
	 * held. The permits of limits that count only some outcomes are kept under {@code reservation} until the
	 * request is {@link #settle settled}.
	 */
	boolean decide(HttpServletRequest request, HttpServletResponse response, LimitCatalog.Match match,
			String reservation) throws IOException {
		EndpointLimits limits = match.limits();
		if (limits.exemption().applies(request)) {
			this.metrics.exempt(limits.policies());
			return true;
		}
		limits = this.changes.current(limits.forPlanOf(request));
		List<KeyedPolicy> keyed;
		try {
			keyed = keyed(request, match, limits);
		}
		catch (RequestCost.InvalidCost ex) {
			writeProblem(response, ex.problem());
			return false;
		}
		long start = System.nanoTime();
		List<Decision> decisions = this.store.decideAll(keyed);
		long elapsed = System.nanoTime() - start;
		boolean allowed = decisions.get(0).allowed();
		if (!allowed || limits.counted().all()) {
			RateLimitHeaders.write(response, limits, decisions, this.legacyHeaders);
		}
		if (!allowed) {
			this.metrics.record(limits.policies(), Outcome.REJECTED, elapsed);
			reject(request, response, new RateLimitRejection(limits.policies(), decisions));
			return false;
		}
		if (!limits.counted().all()) {
			request.setAttribute(reservation, new Reservation(limits.counted(), keyed, decisions));
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

	/**
	 * Settles the permits kept under {@code reservation}, if any, now that the request has ended with the
	 * response's status, or with {@code failure}, which counts as 500 unless an error status was set: a status
	 * that does not count gives them back. A request that is still asynchronous is settled when it completes.
	 */
	void settle(HttpServletRequest request, HttpServletResponse response, @Nullable Throwable failure,
			String reservation) {
		if (!(request.getAttribute(reservation) instanceof Reservation kept)) {
			return;
		}
		if (request.isAsyncStarted()) {
			request.getAsyncContext().addListener(new Settlement(this, reservation), request, response);
			return;
		}
		request.removeAttribute(reservation);
		int status = response.getStatus();
		if (failure != null && status < 400) {
			status = HttpServletResponse.SC_INTERNAL_SERVER_ERROR;
		}
		if (!kept.counted().counts(status)) {
			this.store.giveBack(kept.limits(), kept.decisions());
		}
	}

	/**
	 * Each policy of the request's plan, at the request's cost, with its key, computed once for the policies
	 * that share a key source.
	 */
	private List<KeyedPolicy> keyed(HttpServletRequest request, LimitCatalog.Match match, EndpointLimits limits) {
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
			keyed.add(new KeyedPolicy(key, limits.policy(i, request, match.uriVariables())));
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
		writeProblem(response, this.exceededHandler.problemDetail(request, rejection));
	}

	private void writeProblem(HttpServletResponse response, ProblemDetail problem) throws IOException {
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

	/** The permits an allowed request took under limits that count only some outcomes. */
	private record Reservation(CountedOutcomes counted, List<KeyedPolicy> limits, List<Decision> decisions) {
	}

	/** Settles the reservation of an asynchronous request once it completes, with its final status. */
	private record Settlement(RequestDecisions decisions, String reservation) implements AsyncListener {

		@Override
		public void onComplete(AsyncEvent event) {
			this.decisions.settle((HttpServletRequest) event.getSuppliedRequest(),
					(HttpServletResponse) event.getSuppliedResponse(), null, this.reservation);
		}

		@Override
		public void onTimeout(AsyncEvent event) {
		}

		@Override
		public void onError(AsyncEvent event) {
		}

		@Override
		public void onStartAsync(AsyncEvent event) {
			// a new asynchronous cycle drops the listeners: keep settling at its end
			event.getAsyncContext().addListener(this, event.getSuppliedRequest(), event.getSuppliedResponse());
		}

	}

}
