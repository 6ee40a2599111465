package dev.ratelimit.core.redis;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;

import org.jspecify.annotations.Nullable;

import dev.ratelimit.core.Decision;
import dev.ratelimit.core.FailureStatus;
import dev.ratelimit.core.KeyedPolicy;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.RateLimitStore;

/**
 * What the store does when Redis does not decide: routes each decision to Redis or, during an outage, to the
 * {@link Fallback failure policy}; counts every call that Redis did or did not answer towards the
 * {@link OutageDetector outage}; tells the listeners; and writes it all in the {@link FailureLog}.
 */
final class StoreFailures implements RateLimitStore.Failures, ScriptCaller.Listener {

	private final OutageDetector detector;

	private final Fallback fallback;

	private final FailureLog log;

	private final List<RateLimitStore.FailureListener> listeners = new CopyOnWriteArrayList<>();

	/** Runs whenever Redis answers a call within the timeout. */
	private volatile Runnable onAnswer = () -> {
	};

	StoreFailures(OutageDetector detector, Fallback fallback, FailureLog log) {
		this.detector = detector;
		this.fallback = fallback;
		this.log = log;
	}

	@Override
	public FailureStatus status() {
		return this.detector.status(this.fallback.policy());
	}

	@Override
	public void addListener(RateLimitStore.FailureListener listener) {
		this.listeners.add(listener);
	}

	/** Whether the failure policy decides every request because Redis is failing. */
	boolean failing() {
		return this.detector.failing() != null;
	}

	/**
	 * Decides {@code limits} where the detector routes the decision: the failure policy at once during an
	 * outage, else Redis, through {@code redis}, which is given what releases the route and must run it once
	 * Redis has answered or failed, before it completes.
	 */
	CompletableFuture<List<Decision>> decide(List<KeyedPolicy> limits,
			Function<Runnable, CompletableFuture<List<Decision>>> redis) {
		OutageDetector.Route route = this.detector.route();
		Runnable done = () -> this.detector.done(route);
		boolean handedOver = false;
		try {
			ScriptCaller.CallFailure outage = (route == OutageDetector.Route.FAILURE_POLICY) ? this.detector.failing()
					: null;
			if (outage != null) {
				return CompletableFuture.completedFuture(fallBack(limits, outage));
			}
			CompletableFuture<List<Decision>> decided = redis.apply(done);
			handedOver = true;
			return decided;
		}
		finally {
			if (!handedOver) {
				done.run();
			}
		}
	}

	/** Redis answered a call within the timeout: an outage ends. */
	@Override
	public void answered() {
		if (this.detector.succeeded()) {
			this.log.recovered();
		}
		this.log.answered();
		this.onAnswer.run();
	}

	/** Runs {@code task} whenever Redis answers a call within the timeout, on the thread that got the reply. */
	void onAnswer(Runnable task) {
		this.onAnswer = task;
	}

	/**
	 * Redis did not answer a call, or not yet within the timeout: the failure counts towards an outage, once
	 * per call.
	 */
	void unanswered(ScriptCaller.CallFailure failure) {
		if (!failure.reportedLate && this.detector.failed(failure)) {
			this.log.outageBegan(failure.getCause());
		}
	}

	/** Redis has not answered a call within the timeout, which is still waited for. */
	@Override
	public void late(ScriptCaller.CallFailure failure) {
		unanswered(failure);
	}

	/** Redis did not decide a request: the failure counts towards an outage, and the failure policy decides. */
	List<Decision> failed(List<KeyedPolicy> limits, ScriptCaller.CallFailure failure) {
		unanswered(failure);
		return fallBack(limits, failure);
	}

	/** The failure policy decides a request that Redis did not, and says so. */
	private List<Decision> fallBack(List<KeyedPolicy> limits, ScriptCaller.CallFailure failure) {
		this.log.failed(failure.kind, failure.getCause());
		this.detector.failurePolicyDecided();
		List<RateLimitPolicy> policies = policies(limits);
		for (RateLimitStore.FailureListener listener : this.listeners) {
			try {
				listener.onFailure(policies, failure.getCause());
			}
			catch (RuntimeException ex) {
				this.log.listenerFailed(ex);
			}
		}
		return this.fallback.decide(limits);
	}

	/** Redis had lost a client key's state, and is told what this instance last heard of it. */
	void stateLost() {
		this.log.stateLost();
	}

	/** Redis did not take back the permits of {@code policies}, which stay taken. */
	void giveBackFailed(List<RateLimitPolicy> policies, Throwable cause) {
		this.log.giveBackFailed(cause);
		for (RateLimitStore.FailureListener listener : this.listeners) {
			try {
				listener.onGiveBackFailure(policies, cause);
			}
			catch (RuntimeException ex) {
				this.log.listenerFailed(ex);
			}
		}
	}

	/** A listener of the store's own, such as one of the fleet's shared changes, threw. */
	void listenerFailed(RuntimeException ex) {
		this.log.listenerFailed(ex);
	}

	/** The fleet's shared changes were gone from Redis: this instance wrote back {@code restored}, or failed to. */
	void changesRestored(Collection<String> policies, long restored, @Nullable Throwable failure) {
		this.log.changesRestored(policies, restored, failure);
	}

	/** A reset that Redis carried out, but did not announce to the other instances. */
	void resetNotShared(Throwable cause) {
		this.log.resetNotShared(cause);
	}

	static List<RateLimitPolicy> policies(List<KeyedPolicy> limits) {
		List<RateLimitPolicy> policies = new ArrayList<>(limits.size());
		for (KeyedPolicy limit : limits) {
			policies.add(limit.policy());
		}
		return policies;
	}

}
