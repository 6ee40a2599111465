package dev.ratelimit.spring.method.internal;

import java.lang.reflect.Method;
import java.security.Principal;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import dev.ratelimit.spring.RateLimitExceededException;
import dev.ratelimit.spring.web.internal.LimitCatalog;
import dev.ratelimit.spring.web.internal.LimitedMethod;
import dev.ratelimit.spring.web.internal.RequestDecisions;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;

import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.core.MethodClassKey;
import org.springframework.core.ReactiveAdapterRegistry;
import org.springframework.util.ClassUtils;

/**
 * Decides each call of a limited bean method before it runs, with the limits the catalog declared for it at
 * startup: a blocking method throws {@link RateLimitExceededException} over its limit, one that returns a
 * {@link CompletionStage} returns one failed with it, and a {@code Mono} or {@code Flux} errors with it on each
 * subscription, decided without blocking. A call that a leaky bucket admits with a delay waits for it.
 */
final class LimitedMethodInterceptor implements MethodInterceptor {

	private static final boolean REACTOR = ClassUtils.isPresent("reactor.core.publisher.Mono",
			LimitedMethodInterceptor.class.getClassLoader());

	private static final boolean SECURITY = ClassUtils.isPresent(
			"org.springframework.security.core.context.SecurityContextHolder",
			LimitedMethodInterceptor.class.getClassLoader());

	private final ObjectProvider<LimitCatalog> catalog;

	private final ObjectProvider<RequestDecisions> decisions;

	/** The limits of each method called, by the method as invoked and the target's class. */
	private final Map<MethodClassKey, Optional<LimitedMethod>> methods = new ConcurrentHashMap<>();

	LimitedMethodInterceptor(ObjectProvider<LimitCatalog> catalog, ObjectProvider<RequestDecisions> decisions) {
		this.catalog = catalog;
		this.decisions = decisions;
	}

	@Override
	public @Nullable Object invoke(MethodInvocation invocation) throws Throwable {
		LimitedMethod limited = limited(invocation);
		if (limited == null) {
			return invocation.proceed();
		}
		RequestDecisions decisions = this.decisions.getObject();
		Class<?> returns = invocation.getMethod().getReturnType();
		boolean future = CompletionStage.class.isAssignableFrom(returns);
		// a CompletionStage has a reactive adapter too, but its work starts when the method is called
		if (!future && REACTOR && ReactiveAdapterRegistry.getSharedInstance().getAdapter(returns) != null) {
			return ReactiveCalls.decide(invocation, limited, decisions, returns);
		}
		Principal user = limited.readsPrincipal() ? principal() : null;
		RequestDecisions.Verdict verdict = decisions.decide(limited.call(invocation.getArguments(), user),
				limited.match());
		RuntimeException refused = refusal(verdict, limited);
		if (refused != null) {
			if (future && returns.isAssignableFrom(CompletableFuture.class)) {
				return CompletableFuture.failedFuture(refused);
			}
			throw refused;
		}
		// the call's permits in flight return when it has ended: when it returns, or when its future completes
		RequestDecisions.Reservation kept = verdict.reservation();
		Object returned;
		try {
			if (verdict.action() == RequestDecisions.Verdict.Action.HOLD) {
				hold(verdict.delayNanos());
			}
			returned = invocation.proceed();
		}
		catch (Throwable ex) {
			if (kept != null) {
				decisions.release(kept);
			}
			throw ex;
		}
		if (kept != null) {
			if (returned instanceof CompletionStage<?> stage) {
				stage.whenComplete((result, ex) -> decisions.release(kept));
			}
			else {
				decisions.release(kept);
			}
		}
		return returned;
	}

	/** The limits of the method called, as the bean's class declares it, or null if it has none. */
	private @Nullable LimitedMethod limited(MethodInvocation invocation) {
		Object target = invocation.getThis();
		Class<?> targetClass = (target != null) ? AopUtils.getTargetClass(target) : null;
		return this.methods.computeIfAbsent(new MethodClassKey(invocation.getMethod(), targetClass), (key) -> {
			Class<?> type = ClassUtils.getUserClass((targetClass != null) ? targetClass
					: invocation.getMethod().getDeclaringClass());
			Method method = AopUtils.getMostSpecificMethod(invocation.getMethod(), type);
			return Optional.ofNullable(this.catalog.getObject().limitedMethod(type, method));
		}).orElse(null);
	}

	/**
	 * Returns what a verdict that lets the call through never is: the exception of a call over its limit, or of
	 * a call whose cost its limits can never take; null if the call goes on.
	 */
	static @Nullable RuntimeException refusal(RequestDecisions.Verdict verdict, LimitedMethod limited) {
		return switch (verdict.action()) {
			case PROCEED, HOLD -> null;
			case REJECT -> new RateLimitExceededException(Objects.requireNonNull(verdict.rejection()),
					verdict.headers());
			case BAD_REQUEST -> new IllegalArgumentException("Invalid cost of a call of "
					+ limited.method().getDeclaringClass().getSimpleName() + "." + limited.method().getName() + ": "
					+ Objects.requireNonNull(verdict.problem()).getDetail());
		};
	}

	/** Waits for the slot a leaky bucket gave the call; an interruption ends the wait and is kept. */
	private static void hold(long delayNanos) {
		long until = System.nanoTime() + delayNanos;
		for (long left = delayNanos; left > 0 && !Thread.currentThread().isInterrupted(); left = until
				- System.nanoTime()) {
			LockSupport.parkNanos(left);
		}
		if (Thread.currentThread().isInterrupted()) {
			throw new IllegalStateException("Interrupted while a call waited " + TimeUnit.NANOSECONDS.toMillis(
					delayNanos) + " ms for the slot a leaky bucket gave it");
		}
	}

	/** The authenticated user of the calling thread, as Spring Security holds it, or null. */
	private static @Nullable Principal principal() {
		return SECURITY ? SecurityPrincipal.current() : null;
	}

}
