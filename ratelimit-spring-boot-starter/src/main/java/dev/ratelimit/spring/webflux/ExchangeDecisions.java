package dev.ratelimit.spring.webflux;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import dev.ratelimit.spring.RateLimitExceededException;
import dev.ratelimit.spring.web.internal.LimitCatalog;
import dev.ratelimit.spring.web.internal.RequestDecisions;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

import org.springframework.core.ResolvableType;
import org.springframework.http.HttpStatus;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.MediaType;
import org.springframework.http.ProblemDetail;
import org.springframework.http.codec.HttpMessageWriter;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.server.ServerWebExchange;

/**
 * Decides an exchange and carries out what {@link RequestDecisions} made of it, without blocking: it resolves
 * the principal, when a limit reads it, and what the endpoint's reactive resolvers answer, decides without
 * waiting for the store, writes the rate limit headers, answers a rejected request itself with 429,
 * {@code Retry-After} and a problem body written with the application's codecs, and holds a request that a leaky
 * bucket admitted with a delay by subscribing to the rest of its processing only once its slot comes, holding
 * no thread meanwhile: the shaping scheduler releases it, back on its own event loop. The permits of limits that
 * count only some outcomes are settled when the response commits, with its status.
 */
final class ExchangeDecisions {

	/** The exchange attribute under which its limits keep their permits in flight until it ends. */
	private static final String IN_FLIGHT = ExchangeDecisions.class.getName() + ".inFlight";


	private static final Log logger = LogFactory.getLog(ExchangeDecisions.class);

	private static final ResolvableType PROBLEM = ResolvableType.forClass(ProblemDetail.class);

	private final RequestDecisions decisions;

	private final ReactiveRateLimitExceededHandler exceededHandler;

	private final List<HttpMessageWriter<?>> writers;

	private final ReactiveResolutions resolutions = new ReactiveResolutions();

	private final AtomicInteger held = new AtomicInteger();

	/** Releases held requests: the shaping scheduler, which a test can drive by hand. */
	private final Scheduler releases;

	ExchangeDecisions(RequestDecisions decisions, ReactiveRateLimitExceededHandler exceededHandler,
			List<HttpMessageWriter<?>> writers, Scheduler releases) {
		this.decisions = decisions;
		this.exceededHandler = exceededHandler;
		this.writers = writers;
		this.releases = releases;
	}

	/** How many requests a leaky bucket holds until their slot. */
	int held() {
		return this.held.get();
	}

	/**
	 * Decides the request under the limits it matched; returns {@code proceed}, subscribed to at once, after
	 * the request's delay, or never when the request was answered here.
	 */
	<T> Mono<T> decide(ExchangeLimitedRequest request, LimitCatalog.Match match, Mono<T> proceed) {
		// only when a limit reads it: the reactive security context may be loaded through the web session
		boolean principal = match.limits().readsPrincipal();
		if (!principal && !this.resolutions.consulted(match.limits())) {
			return Mono.defer(() -> decided(request, match, proceed));
		}
		Mono<?> known = principal ? request.exchange().getPrincipal().doOnNext(request::principal) : Mono.empty();
		return known.then(Mono.defer(() -> this.resolutions.resolve(request, match.limits())))
			.flatMap((resolved) -> decided(resolved, match, proceed));
	}

	/**
	 * Carries out the verdict once decided: at once when the store decided on the calling thread, as the
	 * in-memory store does, and the request goes on; else in a task of its own on the request's event loop.
	 * <ul>
	 * <li>A verdict that the Redis client's I/O thread completed is carried out there no longer: that thread must
	 * go on reading replies while the request runs, and a rejection answered from it was seen to leave its
	 * connection unable to take the next request.</li>
	 * <li>An answer of the limiter's own is written after the task that dispatched the request even when decided
	 * at once: Reactor Netty before 1.3.8 stops reading a keep-alive connection for good when a request that
	 * waited in its queue is answered within that task (reactor/reactor-netty#4361), as a rejection decided in
	 * memory would be whenever a client sends a request before the answer to its previous one is complete on the
	 * server's side.</li>
	 * </ul>
	 */
	private <T> Mono<T> decided(ExchangeLimitedRequest request, LimitCatalog.Match match, Mono<T> proceed) {
		CompletableFuture<RequestDecisions.Verdict> decided = this.decisions.decideAsync(request, match)
			.toCompletableFuture();
		if (decided.isDone() && !decided.isCompletedExceptionally() && decided.join().goesOn()) {
			return carryOut(request, decided.join(), proceed);
		}
		// an exchange cancelled before its verdict is carried out gives back what the verdict kept
		Mono<RequestDecisions.Verdict> verdict = Mono.fromCompletionStage(decided)
			.doOnCancel(() -> decided.thenAccept((done) -> {
				if (done.reservation() != null) {
					this.decisions.release(done.reservation());
				}
			}));
		return (decided.isCompletedExceptionally() ? verdict : verdict.publishOn(request.eventLoop()))
			.flatMap((done) -> carryOut(request, done, proceed));
	}

	private <T> Mono<T> carryOut(ExchangeLimitedRequest request, RequestDecisions.Verdict verdict, Mono<T> proceed) {
		ServerWebExchange exchange = request.exchange();
		ServerHttpResponse response = exchange.getResponse();
		verdict.headers().forEach((name, values) -> response.getHeaders().addAll(name, values));
		RequestDecisions.Reservation reservation = verdict.reservation();
		if (reservation != null && !reservation.counted().all()) {
			response.beforeCommit(() -> {
				settle(reservation, response.getStatusCode());
				return Mono.empty();
			});
		}
		Mono<T> carriedOut = switch (verdict.action()) {
			case PROCEED -> proceed;
			case HOLD -> hold(proceed, verdict.delayNanos(), request.eventLoop());
			case REJECT -> write(response,
					this.exceededHandler.problemDetail(exchange, Objects.requireNonNull(verdict.rejection())));
			case BAD_REQUEST -> write(response, Objects.requireNonNull(verdict.problem()));
		};
		if (reservation != null && !reservation.permits().isEmpty()) {
			kept(exchange).add(reservation);
		}
		return carriedOut;
	}

	/** What the exchange's limits keep until it ends, created if needed. */
	private static List<RequestDecisions.Reservation> kept(ServerWebExchange exchange) {
		List<RequestDecisions.Reservation> kept = exchange.getAttribute(IN_FLIGHT);
		if (kept == null) {
			kept = new CopyOnWriteArrayList<>();
			exchange.getAttributes().put(IN_FLIGHT, kept);
		}
		return kept;
	}

	/**
	 * Returns {@code chain}, the whole handling of the exchange, giving back the permits in flight that its
	 * limits took once it ends: completed, failed, or cancelled by a client gone away. A handler's result, such
	 * as a {@code CompletableFuture} or a {@code Flux}, is written after the handler adapter has returned: only
	 * the end of the chain is the end of the request.
	 */
	Mono<Void> releasingAtTheEnd(ServerWebExchange exchange, Mono<Void> chain) {
		return chain.doFinally((signal) -> {
			List<RequestDecisions.Reservation> kept = exchange.getAttribute(IN_FLIGHT);
			if (kept != null) {
				kept.forEach(this.decisions::release);
			}
		});
	}

	/** Holds the request until its slot, then lets it go on back on its own event loop. */
	private <T> Mono<T> hold(Mono<T> proceed, long delayNanos, Scheduler eventLoop) {
		this.held.incrementAndGet();
		return Mono.delay(Duration.ofNanos(delayNanos), this.releases)
			.doFinally((signal) -> this.held.decrementAndGet())
			.publishOn(eventLoop)
			.then(proceed);
	}

	/** Takes the permits of a request whose status counts; a failure of the store leaves them untaken. */
	private void settle(RequestDecisions.Reservation reservation, @Nullable HttpStatusCode status) {
		int code = (status != null) ? status.value() : HttpStatus.OK.value();
		this.decisions.settleAsync(reservation, code).whenComplete((settled, ex) -> {
			if (ex != null && logger.isDebugEnabled()) {
				logger.debug("Could not take the permits of a request whose status counts", ex);
			}
		});
	}

	/**
	 * Answers a request whose handler let the exception of a limited bean method's call out, as a request over
	 * its own limits is answered: the call's rate limit headers, in place of any the request's own limits wrote,
	 * and the problem body of the exceeded handler.
	 */
	Mono<Void> reject(ServerWebExchange exchange, RateLimitExceededException exceeded) {
		ServerHttpResponse response = exchange.getResponse();
		exceeded.headers().forEach((name, values) -> response.getHeaders().put(name, values));
		return write(response, this.exceededHandler.problemDetail(exchange, exceeded.rejection()));
	}

	/** Answers the request with the problem, written as WebFlux writes a problem. */
	@SuppressWarnings("unchecked")
	private <T> Mono<T> write(ServerHttpResponse response, ProblemDetail problem) {
		response.setStatusCode(HttpStatusCode.valueOf(problem.getStatus()));
		for (HttpMessageWriter<?> writer : this.writers) {
			if (writer.canWrite(PROBLEM, MediaType.APPLICATION_PROBLEM_JSON)) {
				return ((HttpMessageWriter<ProblemDetail>) writer)
					.write(Mono.just(problem), PROBLEM, MediaType.APPLICATION_PROBLEM_JSON, response, Map.of())
					.then(Mono.empty());
			}
		}
		return response.setComplete().then(Mono.empty());
	}

}
