package dev.ratelimit.core.redis;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;

import org.jspecify.annotations.Nullable;

import dev.ratelimit.core.FailurePolicy;
import dev.ratelimit.core.FailureStatus;
import dev.ratelimit.core.TimeSource;

/**
 * Decides when Redis is failing, so that decisions stop waiting for it: at once when it cannot be reached, or
 * when at least {@value #FAILURES_TO_SWITCH} calls in a row failed or were late, sent over at least one timeout.
 * One late reply is no outage, nor are many calls sent at one instant behind one slow reply (a cold client, a
 * pause of the JVM): each of those requests alone takes the failure policy. While Redis is failing, one decision at a time still goes to it (a
 * probe); the first call that Redis answers, probe or heartbeat, ends the outage. It also counts the decisions
 * that the failure policy made, in all and during the current outage, for {@link FailureStatus}.
 */
final class OutageDetector {

	static final int FAILURES_TO_SWITCH = 3;

	private final long timeoutNanos;

	private final AtomicInteger consecutiveFailures = new AtomicInteger();

	/** When the first call of the current run of failures was sent. */
	private volatile long firstFailureSent;

	/**
	 * The current outage, null while Redis answers: one reference, so that a decision that sees Redis failing
	 * also sees the outage it counts in, whichever thread began it.
	 */
	private final AtomicReference<@Nullable Outage> outage = new AtomicReference<>();

	private final AtomicBoolean probing = new AtomicBoolean();

	private final TimeSource ticker;

	/** Decisions the failure policy made since the store was built. */
	private final LongAdder decisions = new LongAdder();

	OutageDetector(long timeoutNanos, TimeSource ticker) {
		this.timeoutNanos = timeoutNanos;
		this.ticker = ticker;
	}

	/** Where a decision goes. */
	enum Route {

		REDIS, PROBE, FAILURE_POLICY

	}

	Route route() {
		if (this.outage.get() == null) {
			return Route.REDIS;
		}
		return this.probing.compareAndSet(false, true) ? Route.PROBE : Route.FAILURE_POLICY;
	}

	void done(Route route) {
		if (route == Route.PROBE) {
			this.probing.set(false);
		}
	}

	/** Redis answered; returns whether that ended an outage. */
	boolean succeeded() {
		this.consecutiveFailures.set(0);
		return this.outage.get() != null && this.outage.getAndSet(null) != null;
	}

	/** Redis did not answer a call; returns whether that began an outage. */
	boolean failed(ScriptCaller.CallFailure failure) {
		ScriptCaller.Kind kind = failure.kind;
		if (!kind.blamesRedis) {
			return false;
		}
		int failures = this.consecutiveFailures.incrementAndGet();
		if (failures == 1) {
			this.firstFailureSent = failure.sentNanos;
		}
		Outage current = this.outage.get();
		if (current != null) {
			current.last = failure;
			return false;
		}
		boolean sustained = failures >= FAILURES_TO_SWITCH
				&& failure.sentNanos - this.firstFailureSent >= this.timeoutNanos;
		return (kind == ScriptCaller.Kind.UNREACHABLE || sustained)
				&& this.outage.compareAndSet(null, new Outage(this.ticker.nanoTime(), failure));
	}

	/** The last failure while Redis is failing, null while it answers. */
	ScriptCaller.@Nullable CallFailure failing() {
		Outage current = this.outage.get();
		return (current != null) ? current.last : null;
	}

	/** The failure policy made one decision, during an outage or for one call that Redis did not answer. */
	void failurePolicyDecided() {
		this.decisions.increment();
		Outage current = this.outage.get();
		if (current != null) {
			current.decisions.increment();
		}
	}

	FailureStatus status(FailurePolicy policy) {
		Outage current = this.outage.get();
		if (current == null) {
			return new FailureStatus(policy, null, this.decisions.sum(), 0);
		}
		// the outage's count first: every decision counts in all before it counts in the outage
		long duringOutage = current.decisions.sum();
		return new FailureStatus(policy, Duration.ofNanos(this.ticker.nanoTime() - current.began),
				this.decisions.sum(), duringOutage);
	}

	/** One outage: when the store switched to the failure policy, its last failure, and what it decided since. */
	private static final class Outage {

		final long began;

		volatile ScriptCaller.CallFailure last;

		final LongAdder decisions = new LongAdder();

		Outage(long began, ScriptCaller.CallFailure first) {
			this.began = began;
			this.last = first;
		}

	}

}
