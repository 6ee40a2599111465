package dev.ratelimit.spring.webmvc;

import java.io.IOException;
import java.util.Objects;

import dev.ratelimit.spring.RateLimitExceededException;
import dev.ratelimit.spring.RateLimitExceededHandler;
import dev.ratelimit.spring.RateLimitRejection;
import dev.ratelimit.spring.web.internal.LimitCatalog;
import dev.ratelimit.spring.web.internal.RequestDecisions;
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
 * Carries out on a servlet request what {@link RequestDecisions} made of it, wherever it is decided: in the
 * Spring MVC interceptor or in the servlet filter ahead of Spring Security. It writes the rate limit headers,
 * answers a rejected request itself with 429, {@code Retry-After} and a problem body written as Spring MVC
 * writes one, {@link HeldRequests holds} a request that a leaky bucket admitted with a delay, and keeps what
 * limits that count only some outcomes take of a request in a request attribute until the request is
 * {@link #settle settled}, when it completes if it went asynchronous.
 */
final class ServletDecisions {

	private final RequestDecisions decisions;

	private final RateLimitExceededHandler exceededHandler;

	private final HeldRequests heldRequests;

	private final ObjectProvider<RequestMappingHandlerAdapter> handlerAdapters;

	private volatile @Nullable HttpMessageConverter<Object> problemConverter;

	ServletDecisions(RequestDecisions decisions, RateLimitExceededHandler exceededHandler, HeldRequests heldRequests,
			ObjectProvider<RequestMappingHandlerAdapter> handlerAdapters) {
		this.decisions = decisions;
		this.exceededHandler = exceededHandler;
		this.heldRequests = heldRequests;
		this.handlerAdapters = handlerAdapters;
	}

	/**
	 * Decides the request unless it is exempt; returns whether it proceeds now, false when it was rejected or
	 * held. What limits that count only some outcomes take of it is kept under {@code reservation} until the
	 * request is {@link #settle settled}.
	 */
	boolean decide(ServletLimitedRequest limited, HttpServletResponse response, LimitCatalog.Match match,
			String reservation) throws IOException {
		HttpServletRequest request = limited.request();
		RequestDecisions.Verdict verdict = this.decisions.decide(limited, match);
		verdict.headers().forEach((name, values) -> values.forEach((value) -> response.addHeader(name, value)));
		if (verdict.reservation() != null) {
			request.setAttribute(reservation, verdict.reservation());
		}
		switch (verdict.action()) {
			case PROCEED -> {
				return true;
			}
			case HOLD -> this.heldRequests.hold(request, response, verdict.delayNanos());
			case REJECT -> {
				RateLimitRejection rejection = Objects.requireNonNull(verdict.rejection());
				writeProblem(response, this.exceededHandler.problemDetail(request, rejection));
			}
			case BAD_REQUEST -> writeProblem(response, Objects.requireNonNull(verdict.problem()));
		}
		return false;
	}

	/**
	 * Answers a request whose handler let the exception of a limited bean method's call out, as a request over
	 * its own limits is answered: the call's rate limit headers, in place of any the request's own limits wrote,
	 * and the problem body of the exceeded handler.
	 */
	void reject(HttpServletRequest request, HttpServletResponse response, RateLimitExceededException exceeded)
			throws IOException {
		exceeded.headers().forEach((name, values) -> {
			response.setHeader(name, null);
			values.forEach((value) -> response.addHeader(name, value));
		});
		writeProblem(response, this.exceededHandler.problemDetail(request, exceeded.rejection()));
	}

	/**
	 * Settles what is kept under {@code reservation}, if any, now that the request has ended with the
	 * response's status, or with {@code failure}, which counts as 500 unless an error status was set. A request
	 * that is still asynchronous is settled when it completes.
	 */
	void settle(HttpServletRequest request, HttpServletResponse response, @Nullable Throwable failure,
			String reservation) {
		if (!(request.getAttribute(reservation) instanceof RequestDecisions.Reservation kept)) {
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
		this.decisions.settle(kept, status);
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

	/** Settles the reservation of an asynchronous request once it completes, with its final status. */
	private record Settlement(ServletDecisions decisions, String reservation) implements AsyncListener {

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
