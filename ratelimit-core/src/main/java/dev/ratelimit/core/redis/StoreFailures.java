package dev.ratelimit.core.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.function.ToIntFunction;

import org.jspecify.annotations.Nullable;

import dev.ratelimit.core.Decision;
import dev.ratelimit.core.FailurePolicy;
import dev.ratelimit.core.FailureStatus;
import dev.ratelimit.core.KeyedPolicy;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.RateLimitStore;
import dev.ratelimit.core.internal.FailureListeners;
import dev.ratelimit.core.internal.FailureLog;
import dev.ratelimit.core.internal.OutageDetector;
import dev.ratelimit.core.redis.ScriptCaller.CallFailure;

/**
 * What the store does when Redis does not decide: routes each decision to Redis or, during an outage, to the
 * {@link Fallback failure policy}; counts every call that Redis did or did not answer towards the
 * {@link OutageDetector outage} of its part of the key space; tells the listeners; and writes it all in the
 * {@link FailureLog}. On a Cluster each slot has an outage of its own, so that a node that fails puts only the
 * keys it serves on the failure policy; elsewhere the key space is one part.
 */
final class StoreFailures implements RateLimitStore.Failures, ScriptCaller.Listener {

	/** The outage of each part of the key space that Redis was called for, created at its first call. */
	private final ConcurrentHashMap<Integer, OutageDetector<CallFailure>> detectors = new ConcurrentHashMap<>();

	private final Supplier<OutageDetector<CallFailure>> newDetector;

	/** The part of the key space of a client key, as {@link ScriptCaller#partition} says of its calls. */
	private final ToIntFunction<String> partitions;

	/** Whether the key space has parts of its own, the slots of a Cluster. */
	private final boolean partitioned;

	private final Fallback fallback;

	private final FailureLog log;

	private final FailureListeners listeners;

	/** Runs whenever Redis answers a call within the timeout. */
	private volatile Runnable onAnswer = () -> {
	};

	/**
	 * @param newDetector a new outage detector, one per part of the key space
	 * @param partitions the part of a client key, or null where the key space is one part
	 */
	StoreFailures(Supplier<OutageDetector<CallFailure>> newDetector,
			@Nullable ToIntFunction<String> partitions, Fallback fallback, FailureLog log) {
		this.newDetector = newDetector;
		this.partitioned = partitions != null;
		this.partitions = (partitions != null) ? partitions : (client) -> 0;
		this.fallback = fallback;
		this.log = log;
		this.listeners = new FailureListeners(log);
	}

	/**
	 * The failure policy's standing over the whole key space: failing since the oldest outage of any part,
	 * counting the decisions of every part, and on a Cluster naming the slots that fail.
	 */
	@Override
	public FailureStatus status() {
		FailurePolicy policy = this.fallback.policy();
		Duration failingFor = null;
		long decisions = 0;
		long duringOutage = 0;
		List<Integer> failing = new ArrayList<>();
		for (Map.Entry<Integer, OutageDetector<CallFailure>> part : this.detectors.entrySet()) {
			FailureStatus status = part.getValue().status(policy);
			decisions += status.decisions();
			if (status.failing()) {
				duringOutage += status.decisionsDuringOutage();
				failing.add(part.getKey());
				if (failingFor == null || status.failingFor().compareTo(failingFor) > 0) {
					failingFor = status.failingFor();
				}
			}
		}
		String failingPart = (this.partitioned && failingFor != null) ? slots(failing) : null;
		return new FailureStatus(policy, failingFor, decisions, duringOutage, failingPart);
	}

	/** The slots, as ranges: {@code "slots 0-5460, 10923"}. */
	static String slots(List<Integer> slots) {
		Collections.sort(slots);
		StringBuilder ranges = new StringBuilder("slots ");
		for (int i = 0; i < slots.size(); i++) {
			int first = slots.get(i);
			while (i + 1 < slots.size() && slots.get(i + 1) == slots.get(i) + 1) {
				i++;
			}
			ranges.append((ranges.length() > 6) ? ", " : "").append(first);
			if (slots.get(i) != first) {
				ranges.append('-').append(slots.get(i));
			}
		}
		return ranges.toString();
	}

	private OutageDetector<CallFailure> detector(int partition) {
		OutageDetector<CallFailure> detector = this.detectors.get(partition);
		return (detector != null) ? detector : this.detectors.computeIfAbsent(partition, (p) -> this.newDetector.get());
	}

	/** Whether some part of the key space is failing. */
	private boolean anyFailing() {
		for (OutageDetector<CallFailure> detector : this.detectors.values()) {
			if (detector.failing() != null) {
				return true;
			}
		}
		return false;
	}

	@Override
	public void addListener(RateLimitStore.FailureListener listener) {
		this.listeners.add(listener);
	}

	/**
	 * Decides {@code limits} where the detector routes the decision: the failure policy at once during an
	 * outage, else Redis, through {@code redis}, which is given what releases the route and must run it once
	 * Redis has answered or failed, before it completes.
	 */
	CompletableFuture<List<Decision>> decide(List<KeyedPolicy> limits,
			Function<Runnable, CompletableFuture<List<Decision>>> redis) {
		OutageDetector<CallFailure> detector = detector(this.partitions.applyAsInt(limits.get(0).key()));
		OutageDetector.Route route = detector.route();
		Runnable done = () -> detector.done(route);
		boolean handedOver = false;
		try {
			ScriptCaller.CallFailure outage = (route == OutageDetector.Route.FAILURE_POLICY) ? detector.failing()
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

	/** Redis answered a call within the timeout: the outage of its part ends, and once none is left, it says so. */
	@Override
	public void answered(int partition) {
		if (detector(partition).succeeded() && !anyFailing()) {
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
		if (!failure.reportedLate && detector(failure.partition).failed(failure, failure.kind, failure.sentNanos)) {
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
		detector(failure.partition).failurePolicyDecided();
		this.listeners.decided(FailureListeners.policies(limits), failure.getCause());
		return this.fallback.decide(limits);
	}

	/** What the failure policy would answer a request of one permit from {@code key} now, taking nothing. */
	Decision inspectByFailurePolicy(String key, RateLimitPolicy policy) {
		return this.fallback.inspect(key, policy);
	}

	/** Redis had lost a client key's state, and is told what this instance last heard of it. */
	void stateLost() {
		this.log.stateLost();
	}

	/** Redis did not take back the permits of {@code policies}, which stay taken. */
	void giveBackFailed(List<RateLimitPolicy> policies, Throwable cause) {
		this.log.giveBackFailed(cause);
		this.listeners.giveBackFailed(policies, cause);
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

}
