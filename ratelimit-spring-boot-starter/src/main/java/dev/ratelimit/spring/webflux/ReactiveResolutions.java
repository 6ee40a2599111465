package dev.ratelimit.spring.webflux;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

import dev.ratelimit.spring.web.internal.EndpointLimits;
import dev.ratelimit.spring.web.internal.LimitedRequest;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.web.server.ServerWebExchange;

/**
 * Asks the application's reactive resolver beans that an endpoint's limits consult ({@code bean:} keys,
 * {@code exempt-if=bean:} conditions, the plan resolver) what they answer for a request, before the request is
 * decided, and keeps each answer on the {@link ExchangeLimitedRequest}: the shared decision path then reads
 * them as it reads any resolver. A resolver that fails is kept as its failure, which the decision path meets
 * where it would meet a resolver throwing, and handles the same way: a key falls back to the client address, a
 * condition exempts nothing, a plan is the declaration's own, each logged at most once a minute.
 */
final class ReactiveResolutions {

	private final Map<EndpointLimits, List<Resolution>> byEndpoint = new ConcurrentHashMap<>();

	/** Whether the limits consult a reactive resolver, whose answer must be resolved first. */
	boolean consulted(EndpointLimits limits) {
		return !resolutions(limits).isEmpty();
	}

	/** Resolves what the limits consult, then gives the request back. */
	Mono<ExchangeLimitedRequest> resolve(ExchangeLimitedRequest request, EndpointLimits limits) {
		List<Resolution> resolutions = resolutions(limits);
		if (resolutions.isEmpty()) {
			return Mono.just(request);
		}
		ServerWebExchange exchange = request.exchange();
		return Flux.fromIterable(resolutions)
			.concatMap((resolution) -> resolution.answer(exchange)
				.doOnNext((answer) -> request.resolved(resolution.bean(), answer))
				.onErrorResume((ex) -> {
					request.resolved(resolution.bean(), new Failure(ex));
					return Mono.empty();
				}))
			.then(Mono.just(request));
	}

	private List<Resolution> resolutions(EndpointLimits limits) {
		return this.byEndpoint.computeIfAbsent(limits, ReactiveResolutions::consultedBy);
	}

	private static List<Resolution> consultedBy(EndpointLimits limits) {
		List<Resolution> resolutions = new ArrayList<>();
		for (Object bean : limits.resolvers()) {
			if (bean instanceof ReactiveKeyResolver keys) {
				resolutions.add(new Resolution(bean, keys::resolve));
			}
			else if (bean instanceof ReactivePlanResolver plans) {
				resolutions.add(new Resolution(bean, plans::resolve));
			}
			else if (bean instanceof ReactiveRateLimitExemption exemption) {
				resolutions.add(new Resolution(bean, exemption::isExempt));
			}
		}
		return List.copyOf(resolutions);
	}

	/**
	 * What {@code resolver} answered for the request: null for nothing, or the resolver's failure, thrown again.
	 */
	static @Nullable Object answer(LimitedRequest request, Object resolver) {
		Object answer = ((ExchangeLimitedRequest) request).answerOf(resolver);
		if (answer instanceof Failure failure) {
			throw failure.asRuntime();
		}
		return answer;
	}

	/** One resolver bean and how to ask it. */
	private record Resolution(Object bean, Function<ServerWebExchange, Mono<?>> ask) {

		/** The answer; a resolver that throws, or returns null, fails it. */
		Mono<?> answer(ServerWebExchange exchange) {
			return Mono.defer(() -> this.ask.apply(exchange));
		}

	}

	/** A resolver's failure, kept as its answer. */
	private record Failure(Throwable cause) {

		RuntimeException asRuntime() {
			return (this.cause instanceof RuntimeException runtime) ? runtime
					: new IllegalStateException(this.cause.toString(), this.cause);
		}

	}

}
