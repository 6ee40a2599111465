package dev.ratelimit.spring.autoconfigure;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

import dev.ratelimit.core.Decision;
import dev.ratelimit.core.KeyedPolicy;
import dev.ratelimit.core.RateLimitPolicy;
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
 * request whose cost its limits can never take is answered with 400 and takes nothing. With an observation
 * registry, each decision is {@link DecisionObserver observed}.
 * <p>
 * Limits that {@link CountedOutcomes count only some outcomes} take their permits before the request runs, so
 * that a client that has spent its quota is refused before any work is done and concurrent requests never take
 * more than the limit; once the request is {@link #settle settled}, a response whose status does not count gives
 * its permits back. Such limits write their headers only on a rejection: an allowed request's permits may be
 * given back, so no header written before it runs could tell what is left.
 * <p>
 * The policies in shadow mode of an endpoint are decided as a stack of their own, after the enforced ones and
 * only if those let the request through, exactly as if they were enforced: a request they would deny takes
 * nothing, one they would admit takes its permits, a leaky bucket's slot included, and gives them back like the
 * enforced ones. Whatever they decide, the request proceeds at once and its response is left as it is, without
 * their headers unless {@code ratelimit.shadow-headers} asks for them; the metrics and the {@link ShadowLog}
 * tell what they would have done.
 */
final class RequestDecisions {

	private final RateLimitStore store;

	private final RateLimitExceededHandler exceededHandler;

	private final RateLimitMetrics metrics;

	private final boolean legacyHeaders;

	private final boolean shadowHeaders;

	private final HeldRequests heldRequests;

	private final ObjectProvider<RequestMappingHandlerAdapter> handlerAdapters;

	private final UnresolvedKeys unresolvedKeys;

	private final PolicyChanges changes;

	private final ShadowLog shadowLog;

	private final @Nullable DecisionObserver observer;

	private volatile @Nullable HttpMessageConverter<Object> problemConverter;

	RequestDecisions(RateLimitStore store, RateLimitExceededHandler exceededHandler, RateLimitMetrics metrics,
			boolean legacyHeaders, boolean shadowHeaders, HeldRequests heldRequests,
			ObjectProvider<RequestMappingHandlerAdapter> handlerAdapters, UnresolvedKeys unresolvedKeys,
			ShadowLog shadowLog, PolicyChanges changes, @Nullable DecisionObserver observer) {
		this.store = store;
		this.exceededHandler = exceededHandler;
		this.metrics = metrics;
		this.legacyHeaders = legacyHeaders;
		this.shadowHeaders = shadowHeaders;
		this.heldRequests = heldRequests;
		this.handlerAdapters = handlerAdapters;
		this.unresolvedKeys = unresolvedKeys;
		this.shadowLog = shadowLog;
		this.changes = changes;
		this.observer = observer;
	}

	/**
	 * Decides the request unless it is exempt; returns whether it proceeds now, false when it was rejected or
	 * held. The permits of limits that count only some outcomes are kept under {@code reservation} until the
	 * request is {@link #settle settled}.
	 */
	boolean decide(ServletLimitedRequest limited, HttpServletResponse response, LimitCatalog.Match match,
			String reservation) throws IOException {
		HttpServletRequest request = limited.request();
		EndpointLimits limits = match.limits();
		if (limits.exemption().applies(limited)) {
			this.metrics.exempt(limits.policies());
			return true;
		}
		limits = this.changes.current(limits.forPlanOf(limited));
		@Nullable String[] keys = new String[limits.policies().size()];
		EndpointLimits.Stack enforced = limits.enforced();
		List<KeyedPolicy> keyed;
		try {
			keyed = keyed(limited, match, limits, enforced, keys);
		}
		catch (RequestCost.InvalidCost ex) {
			writeProblem(response, ex.problem());
			return false;
		}
		List<Decision> decisions = List.of();
		long delay = 0;
		if (!enforced.isEmpty()) {
			long start = System.nanoTime();
			DecisionObserver observer = this.observer;
			decisions = (observer != null) ? observer.decide(this.store, keyed, enforced.policies())
					: this.store.decideAll(keyed);
			long elapsed = System.nanoTime() - start;
			if (!decisions.get(0).allowed()) {
				RateLimitHeaders.write(response, enforced.policyHeader(), enforced.policies(), decisions,
						this.legacyHeaders);
				this.metrics.record(enforced.policies(), Outcome.REJECTED, elapsed);
				reject(request, response, new RateLimitRejection(enforced.policies(), decisions));
				return false;
			}
			delay = delay(decisions);
			this.metrics.record(enforced.policies(), (delay == 0) ? Outcome.ALLOWED : Outcome.DELAYED, elapsed);
			this.metrics.admitted(enforced.policies(), decisions);
		}
		EndpointLimits.Stack shadowed = limits.shadowed();
		List<KeyedPolicy> shadowKeyed = List.of();
		List<Decision> shadowDecisions = List.of();
		if (!shadowed.isEmpty()) {
			shadowKeyed = shadowKeyed(limited, match, limits, shadowed, keys);
			if (shadowKeyed != null) {
				shadowDecisions = decideShadow(shadowed, shadowKeyed);
			}
			if (shadowKeyed == null || !shadowDecisions.get(0).allowed()) {
				// nothing was taken, so nothing is given back
				shadowKeyed = List.of();
				shadowDecisions = List.of();
			}
		}
		if (limits.counted().all()) {
			writeHeaders(response, enforced, decisions, shadowed, shadowDecisions);
		}
		else {
			request.setAttribute(reservation,
					new Reservation(limits.counted(), keyed, decisions, shadowKeyed, shadowDecisions));
		}
		if (delay == 0) {
			return true;
		}
		this.heldRequests.hold(request, response, delay);
		return false;
	}

	/**
	 * Each shadow policy with its key at the request's cost, or null when a cost is one the policy could not
	 * take: enforced, it would answer 400 before any decision, which {@link RequestCost} logs; in shadow mode
	 * the request proceeds undecided by these policies.
	 */
	private @Nullable List<KeyedPolicy> shadowKeyed(LimitedRequest request, LimitCatalog.Match match,
			EndpointLimits limits, EndpointLimits.Stack shadowed, @Nullable String[] keys) {
		try {
			return keyed(request, match, limits, shadowed, keys);
		}
		catch (RequestCost.InvalidCost ex) {
			return null;
		}
	}

	/** Decides the shadow policies as if they were enforced and records what they would have done. */
	private List<Decision> decideShadow(EndpointLimits.Stack shadowed, List<KeyedPolicy> keyed) {
		long start = System.nanoTime();
		List<Decision> decisions = this.store.decideAll(keyed);
		long elapsed = System.nanoTime() - start;
		if (!decisions.get(0).allowed()) {
			this.metrics.record(shadowed.policies(), Outcome.SHADOW_REJECTED, elapsed);
			this.shadowLog.rejected(shadowed.policies());
		}
		else if (delay(decisions) > 0) {
			this.metrics.record(shadowed.policies(), Outcome.SHADOW_DELAYED, elapsed);
			this.shadowLog.delayed(shadowed.policies());
		}
		else {
			this.metrics.record(shadowed.policies(), Outcome.ALLOWED, elapsed);
		}
		return decisions;
	}

	/**
	 * Writes the headers of the enforced policies of an allowed request, and those of its shadow policies if
	 * {@code ratelimit.shadow-headers} asks for them and they were decided.
	 */
	private void writeHeaders(HttpServletResponse response, EndpointLimits.Stack enforced, List<Decision> decisions,
			EndpointLimits.Stack shadowed, List<Decision> shadowDecisions) {
		boolean shadow = this.shadowHeaders && !shadowDecisions.isEmpty();
		if (!shadow) {
			if (!enforced.isEmpty()) {
				RateLimitHeaders.write(response, enforced.policyHeader(), enforced.policies(), decisions,
						this.legacyHeaders);
			}
			return;
		}
		if (enforced.isEmpty()) {
			RateLimitHeaders.write(response, shadowed.policyHeader(), shadowed.policies(), shadowDecisions,
					this.legacyHeaders);
			return;
		}
		List<RateLimitPolicy> policies = new ArrayList<>(enforced.policies());
		policies.addAll(shadowed.policies());
		List<Decision> all = new ArrayList<>(decisions);
		all.addAll(shadowDecisions);
		RateLimitHeaders.write(response, enforced.policyHeader() + ", " + shadowed.policyHeader(), policies, all,
				this.legacyHeaders);
	}

	/**
	 * Settles the permits kept under {@code reservation}, if any, now that the request has ended with the
	 * response's status, or with {@code failure}, which counts as 500 unless an error status was set: a status
	 * that does not count gives them back, the shadow policies' included. A request that is still asynchronous
	 * is settled when it completes.
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
			if (!kept.limits().isEmpty()) {
				this.store.giveBack(kept.limits(), kept.decisions());
			}
			if (!kept.shadowLimits().isEmpty()) {
				this.store.giveBack(kept.shadowLimits(), kept.shadowDecisions());
			}
		}
	}

	/**
	 * Each policy of {@code stack}, of the request's plan, at the request's cost, with its key; a key is
	 * computed once for the policies that share a key source, and kept in {@code keys} for the other stack.
	 */
	private List<KeyedPolicy> keyed(LimitedRequest request, LimitCatalog.Match match, EndpointLimits limits,
			EndpointLimits.Stack stack, @Nullable String[] keys) {
		List<KeySource> sources = limits.keys();
		List<KeyedPolicy> keyed = new ArrayList<>(stack.indices().size());
		for (int i : stack.indices()) {
			String key = keys[i];
			for (int j = 0; j < keys.length && key == null; j++) {
				if (keys[j] != null && sources.get(j) == sources.get(i)) {
					key = keys[j];
				}
			}
			if (key == null) {
				key = Keys.safe(this.unresolvedKeys.key(request, match, i));
			}
			keys[i] = key;
			keyed.add(new KeyedPolicy(key, limits.policy(i, request, match.uriVariables())));
		}
		return keyed;
	}

	/** What becomes of a request with these decisions: the first tells whether its limits admit it. */
	static Outcome outcome(List<Decision> decisions) {
		if (!decisions.get(0).allowed()) {
			return Outcome.REJECTED;
		}
		return (delay(decisions) == 0) ? Outcome.ALLOWED : Outcome.DELAYED;
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

	/**
	 * The permits an allowed request took under limits that count only some outcomes: those of its enforced
	 * policies and those of its shadow policies, each empty when none were taken.
	 */
	private record Reservation(CountedOutcomes counted, List<KeyedPolicy> limits, List<Decision> decisions,
			List<KeyedPolicy> shadowLimits, List<Decision> shadowDecisions) {
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
