package dev.ratelimit.spring.web.internal;

import java.util.Map;
import java.util.Objects;

import dev.ratelimit.core.Decision;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.RateLimiter;
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

	/**
	 * Creates the limiters.
	 * @param catalog the declared policies
	 * @param decisions decides each call
	 * @param current the limits in force, as declared or changed at runtime
	 */
	public CatalogLimiters(LimitCatalog catalog, RequestDecisions decisions, CurrentLimits current) {
		this.catalog = catalog;
		this.decisions = decisions;
		this.current = current;
	}

	@Override
	public RateLimiter limiter(String policy) {
		return new CodeLimiter(limits(policy));
	}

	@Override
	public Decision acquire(String policy, String key) {
		CodeLimiter limiter = new CodeLimiter(limits(policy));
		RequestDecisions.Verdict verdict = decide(limiter.limits, key, limiter.policy().cost());
		if (verdict.action() == RequestDecisions.Verdict.Action.REJECT) {
			throw new RateLimitExceededException(Objects.requireNonNull(verdict.rejection()), verdict.headers());
		}
		return verdict.decisions().get(0);
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

	/** Decides {@code key} taking {@code permits}; a number of permits the policy can never take is refused. */
	private RequestDecisions.Verdict decide(EndpointLimits limits, String key, long permits) {
		RequestDecisions.Verdict verdict = this.decisions.decide(
				new MethodCall("code of policy '" + limits.policies().get(0).name() + "'", CodeDeclarations.ARGUMENTS,
						new Object[] { key, permits }, null),
				new LimitCatalog.Match(limits, Map.of()));
		if (verdict.action() == RequestDecisions.Verdict.Action.BAD_REQUEST) {
			throw new IllegalArgumentException(Objects.requireNonNull(verdict.problem()).getDetail());
		}
		return verdict;
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
			return CatalogLimiters.this.decide(this.limits, key, permits).decisions().get(0);
		}

		@Override
		public boolean tryAcquire(String key) {
			return decide(key).allowed();
		}

	}

}
