package dev.ratelimit.spring.method.internal;

import java.security.Principal;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

import dev.ratelimit.spring.web.internal.LimitedMethod;
import dev.ratelimit.spring.web.internal.RequestDecisions;
import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import org.springframework.core.ReactiveAdapter;
import org.springframework.core.ReactiveAdapterRegistry;
import org.springframework.security.core.context.ReactiveSecurityContextHolder;
import org.springframework.security.core.context.SecurityContext;
import org.springframework.util.ClassUtils;

/**
 * The calls of limited methods that return a reactive type: loaded only where Reactor is on the class path.
 * Each subscription is decided without blocking, and subscribes to what the method returned only if its limits
 * let it through; a decision that the store completed on its own thread goes on on Reactor's parallel
 * scheduler, so that the store's I/O thread never runs the method's work.
 */
final class ReactiveCalls {

	private static final boolean SECURITY = ClassUtils.isPresent(
			"org.springframework.security.core.context.ReactiveSecurityContextHolder",
			ReactiveCalls.class.getClassLoader());

	private ReactiveCalls() {
	}

	static @Nullable Object decide(MethodInvocation invocation, LimitedMethod limited, RequestDecisions decisions,
			Class<?> returns) throws Throwable {
		ReactiveAdapter adapter = Objects
			.requireNonNull(ReactiveAdapterRegistry.getSharedInstance().getAdapter(returns));
		Object returned = invocation.proceed();
		if (returned == null) {
			return null;
		}
		Publisher<Object> publisher = adapter.toPublisher(returned);
		@Nullable Object[] arguments = invocation.getArguments();
		Mono<RequestDecisions.Verdict> verdict = principal(limited)
			.flatMap((user) -> verdict(decisions, limited, arguments, user.orElse(null)));
		if (adapter.isMultiValue()) {
			return adapter.fromPublisher(verdict.flatMapMany((decided) -> {
				RuntimeException refused = LimitedMethodInterceptor.refusal(decided, limited);
				return (refused != null) ? Flux.error(refused)
						: releasing(delay(decided).thenMany(publisher), decisions, decided);
			}));
		}
		return adapter.fromPublisher(verdict.flatMap((decided) -> {
			RuntimeException refused = LimitedMethodInterceptor.refusal(decided, limited);
			return (refused != null) ? Mono.error(refused)
					: releasing(delay(decided).then(Mono.from(publisher)), decisions, decided);
		}));
	}

	/** The subscription's permits in flight return when it ends: completed, failed or cancelled. */
	private static <T> Flux<T> releasing(Flux<T> flux, RequestDecisions decisions, RequestDecisions.Verdict verdict) {
		RequestDecisions.Reservation kept = verdict.reservation();
		return (kept != null) ? flux.doFinally((signal) -> decisions.release(kept)) : flux;
	}

	private static <T> Mono<T> releasing(Mono<T> mono, RequestDecisions decisions, RequestDecisions.Verdict verdict) {
		RequestDecisions.Reservation kept = verdict.reservation();
		return (kept != null) ? mono.doFinally((signal) -> decisions.release(kept)) : mono;
	}

	/** The user of the subscriber's security context, where the limits read it. */
	private static Mono<Optional<Principal>> principal(LimitedMethod limited) {
		if (!SECURITY || !limited.readsPrincipal()) {
			return Mono.just(Optional.empty());
		}
		return ReactiveSecurityContextHolder.getContext()
			.mapNotNull(SecurityContext::getAuthentication)
			.mapNotNull(SecurityPrincipal::user)
			.map(Optional::of)
			.defaultIfEmpty(Optional.empty());
	}

	private static Mono<RequestDecisions.Verdict> verdict(RequestDecisions decisions, LimitedMethod limited,
			@Nullable Object[] arguments, @Nullable Principal user) {
		CompletableFuture<RequestDecisions.Verdict> decided = decisions
			.decideAsync(limited.call(arguments, user), limited.match())
			.toCompletableFuture();
		Mono<RequestDecisions.Verdict> verdict = Mono.fromFuture(decided);
		return decided.isDone() ? verdict : verdict.publishOn(Schedulers.parallel());
	}

	/** Nothing, or the wait for the slot a leaky bucket gave the call. */
	private static Mono<?> delay(RequestDecisions.Verdict verdict) {
		return (verdict.action() == RequestDecisions.Verdict.Action.HOLD)
				? Mono.delay(Duration.ofNanos(verdict.delayNanos())) : Mono.empty();
	}

}
