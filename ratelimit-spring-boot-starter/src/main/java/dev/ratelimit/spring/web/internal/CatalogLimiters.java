package dev.ratelimit.spring.web.internal;

import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;

import dev.ratelimit.core.Decision;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.RateLimiter;
import dev.ratelimit.core.TimeSource;
import dev.ratelimit.spring.RateLimitExceededException;
import dev.ratelimit.spring.RateLimiters;

/**
 * The limiters of the declared policies, deciding through the request path: each decision of code is a call
 * whose one argument is its key, under the limits that {@link LimitCatalog#codeLimits(String)} declares for the
 * policy.
 */
public final class CatalogLimiters implements RateLimiters {

	private final LimitCatalog catalog;

	private final RequestDecisions decisions;

	private final CurrentLimits current;

	private final TimeSource clock;

	/**
	 * Creates the limiters.
	 * @param catalog the declared policies
	 * @param decisions decides each call
	 * @param current the limits in force, as declared or changed at runtime
	 * @param clock the clock that a call waiting for its permits waits on
	 */
	public CatalogLimiters(LimitCatalog catalog, RequestDecisions decisions, CurrentLimits current,
			TimeSource clock) {
		this.catalog = catalog;
		this.decisions = decisions;
		this.current = current;
		this.clock = clock;
	}

	@Override
	public RateLimiter limiter(String policy) {
		return new CodeLimiter(limits(policy));
	}

	@Override
	public Decision acquire(String policy, String key) {
		CodeLimiter limiter = new CodeLimiter(limits(policy));
		RequestDecisions.Verdict verdict = limiter.decide(key, limiter.policy().cost(), Duration.ZERO);
		Decision decision = decision(verdict);
		if (verdict.action() == RequestDecisions.Verdict.Action.REJECT) {
			throw new RateLimitExceededException(Objects.requireNonNull(verdict.rejection()), verdict.headers());
		}
		return decision;
	}

	private EndpointLimits limits(String policy) {
		EndpointLimits limits = this.catalog.codeLimits(policy);
		if (limits == null) {
			throw new IllegalArgumentException("No policy named '" + policy + "' is declared; the declared ones: "
					+ this.catalog.declaredNames() + ". Declare it with @RateLimited, a rule, or ratelimit.policies."
					+ policy + " with a limit and a window.");
		}
		return limits;
	}

	/** The call of code that decides {@code key}, taking {@code permits} and waiting up to {@code maxWait}. */
	private static MethodCall call(EndpointLimits limits, String key, long permits, Duration maxWait) {
		return new MethodCall("code of policy '" + limits.policies().get(0).name() + "'", CodeDeclarations.ARGUMENTS,
				new Object[] { key, permits }, null, maxWait);
	}

	/** The decision of the call; a number of permits the policy can never take is refused. */
	private static Decision decision(RequestDecisions.Verdict verdict) {
		if (verdict.action() == RequestDecisions.Verdict.Action.BAD_REQUEST) {
			throw new IllegalArgumentException(Objects.requireNonNull(verdict.problem()).getDetail());
		}
		return verdict.decisions().get(0);
	}

	/** The limiter of one declared policy, as it is in force at each decision. */
	private final class CodeLimiter implements RateLimiter {

		private final EndpointLimits limits;

		CodeLimiter(EndpointLimits limits) {
			this.limits = limits;
		}

		@Override
		public RateLimitPolicy policy() {
			return CatalogLimiters.this.current.current(this.limits).policies().get(0);
		}

		@Override
		public Decision decide(String key) {
			return decide(key, policy().cost());
		}

		@Override
		public Decision decide(String key, long permits) {
			return decision(decide(key, permits, Duration.ZERO));
		}

		@Override
		public boolean tryAcquire(String key) {
			return decide(key).allowed();
		}

		@Override
		public Decision acquire(String key, Duration maxWait) throws InterruptedException {
			RequestDecisions.Verdict verdict = decide(key, policy().cost(), checked(maxWait));
			Decision decision = decision(verdict);
			if (verdict.action() != RequestDecisions.Verdict.Action.REJECT) {
				CatalogLimiters.this.clock.sleep(verdict.delayNanos());
			}
			return decision;
		}

		@Override
		public CompletableFuture<Decision> acquireAsync(String key, Duration maxWait) {
			try {
				return CatalogLimiters.this.decisions
					.decideAsync(call(this.limits, key, policy().cost(), checked(maxWait)), match())
					.toCompletableFuture()
					.thenCompose((verdict) -> {
						Decision decision = decision(verdict);
						return (verdict.action() == RequestDecisions.Verdict.Action.REJECT)
								? CompletableFuture.completedFuture(decision)
								: CatalogLimiters.this.clock.after(verdict.delayNanos()).thenApply((none) -> decision);
					});
			}
			catch (RuntimeException ex) {
				return CompletableFuture.failedFuture(ex);
			}
		}

		private RequestDecisions.Verdict decide(String key, long permits, Duration maxWait) {
			return CatalogLimiters.this.decisions.decide(call(this.limits, key, permits, maxWait), match());
		}

		private LimitCatalog.Match match() {
			return new LimitCatalog.Match(this.limits, Map.of());
		}

		/** The wait, refused with the policy's reason if it cannot wait that long. */
		private Duration checked(Duration maxWait) {
			policy().withMaxWait(maxWait);
			return maxWait;
		}

	}

}
