package dev.ratelimit.core.jdbc;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import java.util.function.IntSupplier;

import dev.ratelimit.core.Decision;
import dev.ratelimit.core.FailurePolicy;
import dev.ratelimit.core.FailureStatus;
import dev.ratelimit.core.KeyedPolicy;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.RateLimitStore;
import dev.ratelimit.core.internal.FailureListeners;
import dev.ratelimit.core.internal.FailureLog;
import dev.ratelimit.core.internal.FailurePolicyDecisions;
import dev.ratelimit.core.internal.OutageDetector;

/**
 * What the store does when PostgreSQL does not decide: routes each decision to the database or, during an
 * outage, to the failure policy; counts every call that the database did or did not answer towards the
 * {@link OutageDetector outage}; tells the listeners; and writes it all in the {@link FailureLog}. Under
 * {@link FailurePolicy#LOCAL} each instance decides on a local store within its share of every limit,
 * {@code ceil(limit / n)} for the {@code n} instances of the fleet.
 */
final class DatabaseFailures implements RateLimitStore.Failures {

	private final OutageDetector<BoundedCalls.CallFailure> detector;

	private final FailurePolicy policy;

	private final RateLimitStore local;

	private final IntSupplier instances;

	private final FailureLog log;

	private final FailureListeners listeners;

	DatabaseFailures(OutageDetector<BoundedCalls.CallFailure> detector, FailurePolicy policy, RateLimitStore local,
			IntSupplier instances, FailureLog log) {
		this.detector = detector;
		this.policy = policy;
		this.local = local;
		this.instances = instances;
		this.log = log;
		this.listeners = new FailureListeners(log);
	}

	@Override
	public FailureStatus status() {
		return this.detector.status(this.policy);
	}

	/** Whether the database is known to be failing. */
	boolean failing() {
		return this.detector.failing() != null;
	}

	@Override
	public void addListener(RateLimitStore.FailureListener listener) {
		this.listeners.add(listener);
	}

	/**
	 * Decides {@code limits} in the database, or by the failure policy at once during an outage, or once the
	 * database did not decide within the timeout.
	 */
	List<Decision> decide(List<KeyedPolicy> limits, Call<List<Decision>> database) {
		return route(database, (failure) -> fallBack(limits, failure));
	}

	/**
	 * Inspects in the database, or where it does not answer, asks the failure policy what it would answer,
	 * taking nothing.
	 */
	Decision inspect(String key, RateLimitPolicy policy, Call<Decision> database) {
		return route(database, (failure) -> inspectByFailurePolicy(key, policy));
	}

	/**
	 * Takes a permit of a request in flight in the database, or from the failure policy at once during an outage,
	 * or once the database did not answer within the timeout.
	 */
	RateLimitStore.InFlight.Permit inFlight(String name, String key, long limit,
			Call<RateLimitStore.InFlight.Permit> database) {
		return route(database, (failure) -> {
			decidedWithout(failure);
			return FailurePolicyDecisions
				.inFlight(this.policy, this.local, this.instances.getAsInt(), name, key, limit)
				.toCompletableFuture()
				.join();
		});
	}

	private <T> T route(Call<T> database, Function<BoundedCalls.CallFailure, T> failurePolicy) {
		OutageDetector.Route route = this.detector.route();
		try {
			BoundedCalls.CallFailure outage = (route == OutageDetector.Route.FAILURE_POLICY)
					? this.detector.failing() : null;
			if (outage != null) {
				return failurePolicy.apply(outage);
			}
			try {
				T answer = database.call();
				answered();
				return answer;
			}
			catch (BoundedCalls.CallFailure failure) {
				unanswered(failure);
				return failurePolicy.apply(failure);
			}
		}
		finally {
			this.detector.done(route);
		}
	}

	/** Gives back in the database, unless it is failing; permits it does not take back stay taken. */
	void giveBack(List<KeyedPolicy> limits, Call<?> database) {
		BoundedCalls.CallFailure outage = this.detector.failing();
		if (outage != null) {
			giveBackFailed(limits, outage);
			return;
		}
		try {
			database.call();
			answered();
		}
		catch (BoundedCalls.CallFailure failure) {
			unanswered(failure);
			giveBackFailed(limits, failure);
		}
	}

	/** The database answered a call within the timeout: an outage ends. */
	void answered() {
		if (this.detector.succeeded()) {
			this.log.recovered();
		}
		this.log.answered();
	}

	private void unanswered(BoundedCalls.CallFailure failure) {
		if (BoundedCalls.misconfigured(failure.getCause())) {
			throw new IllegalStateException(
					"The rate limit state could not be decided: " + failure.getCause().getMessage(),
					failure.getCause());
		}
		if (this.detector.failed(failure, failure.kind, failure.sentNanos)) {
			this.log.outageBegan(failure.getCause());
		}
	}

	private List<Decision> fallBack(List<KeyedPolicy> limits, BoundedCalls.CallFailure failure) {
		decidedWithout(failure);
		List<RateLimitPolicy> policies = FailureListeners.policies(limits);
		this.listeners.decided(policies, failure.getCause());
		return switch (this.policy) {
			case ALLOW -> FailurePolicyDecisions.allowed(policies);
			case DENY -> FailurePolicyDecisions.denied(policies);
			case LOCAL -> decideLocally(limits);
		};
	}

	/** Logs and counts a decision that the failure policy makes because the database did not. */
	private void decidedWithout(BoundedCalls.CallFailure failure) {
		this.log.failed(failure.kind, failure.getCause());
		this.detector.failurePolicyDecided();
	}

	/** Decides on the local store within this instance's share; what it admits takes nothing in the database. */
	private List<Decision> decideLocally(List<KeyedPolicy> limits) {
		int n = this.instances.getAsInt();
		List<KeyedPolicy> shares = new ArrayList<>(limits.size());
		for (KeyedPolicy limit : limits) {
			shares.add(new KeyedPolicy(limit.key(), share(limit.policy(), n)));
		}
		List<Decision> decisions = this.local.decideAll(shares);
		List<Decision> untaken = new ArrayList<>(decisions.size());
		for (Decision decision : decisions) {
			// not taken: a give-back to the database must not find it so
			untaken.add(new Decision(decision.allowed(), decision.limit(), decision.remaining(),
					decision.retryAfterNanos(), decision.resetAfterNanos(), decision.delayNanos()));
		}
		return untaken;
	}

	/** What the failure policy would answer a request of one permit from {@code key} now, taking nothing. */
	private Decision inspectByFailurePolicy(String key, RateLimitPolicy policy) {
		return switch (this.policy) {
			case ALLOW -> new Decision(true, policy.limit(), policy.capacity(), 0, 0, 0);
			case DENY -> FailurePolicyDecisions.denied(List.of(policy)).get(0);
			case LOCAL -> this.local.inspect(key, share(policy, this.instances.getAsInt()));
		};
	}

	private static RateLimitPolicy share(RateLimitPolicy policy, int instances) {
		// no reservation without the database: a request that may wait is decided like any other
		RateLimitPolicy given = policy.maxWait().isZero() ? policy : policy.withMaxWait(Duration.ZERO);
		return FailurePolicyDecisions.share(given, instances);
	}

	/** The listener of the shared changes threw, which it must not. */
	void listenerFailed(RuntimeException ex) {
		this.log.listenerFailed(ex);
	}

	private void giveBackFailed(List<KeyedPolicy> limits, BoundedCalls.CallFailure failure) {
		this.log.giveBackFailed(failure.getCause());
		this.listeners.giveBackFailed(FailureListeners.policies(limits), failure.getCause());
	}

	@FunctionalInterface
	interface Call<T> {

		T call() throws BoundedCalls.CallFailure;

	}

}
