package dev.ratelimit.core.internal;

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
 * Decides when a store's server is failing, so that decisions stop waiting for it: at once when it cannot be
 * reached, or when at least {@value #FAILURES_TO_SWITCH} calls in a row failed or were late, sent over at least
 * one timeout. One late reply is no outage, nor are many calls sent at one instant behind one slow reply (a cold
 * client, a pause of the JVM): each of those requests alone takes the failure policy. While the server is
 * failing, one decision at a time still goes to it (a probe); the first call that it answers, probe or
 * heartbeat, ends the outage. It also counts the decisions that the failure policy made, in all and during the
 * current outage, for {@link FailureStatus}.
 *
 * @param <F> the failures the store keeps, the last of an outage being its cause
 */
public final class OutageDetector<F> {

	/** How many failed calls in a row, sent over at least one timeout, make an outage. */
	public static final int FAILURES_TO_SWITCH = 3;

	private final long timeoutNanos;

	private final AtomicInteger consecutiveFailures = new AtomicInteger();

	/** When the first call of the current run of failures was sent. */
	private volatile long firstFailureSent;

	/**
	 * The current outage, null while the server answers: one reference, so that a decision that sees the server
	 * failing also sees the outage it counts in, whichever thread began it.
	 */
	private final AtomicReference<@Nullable Outage<F>> outage = new AtomicReference<>();

	private final AtomicBoolean probing = new AtomicBoolean();

	private final TimeSource ticker;

	/** Decisions the failure policy made since the store was built. */
	private final LongAdder decisions = new LongAdder();

	/**
	 * Creates a detector of one part of a server's key space.
	 * @param timeoutNanos how long the server may take to answer a call
	 * @param ticker the clock of the calls' sending instants and of the outages
	 */
	public OutageDetector(long timeoutNanos, TimeSource ticker) {
		this.timeoutNanos = timeoutNanos;
		this.ticker = ticker;
	}

	/** Where a decision goes. */
	public enum Route {

		/** To the server, which answers. */
		SERVER,

		/** To the server, which is failing, as the one decision that checks whether it answers again. */
		PROBE,

		/** To the failure policy, without waiting for the failing server. */
		FAILURE_POLICY

	}

	/**
	 * Routes a decision; one that is given {@link Route#PROBE} must be {@link #done done} once answered or failed.
	 * @return where the decision goes
	 */
	public Route route() {
		if (this.outage.get() == null) {
			return Route.SERVER;
		}
		return this.probing.compareAndSet(false, true) ? Route.PROBE : Route.FAILURE_POLICY;
	}

	/**
	 * A decision routed by {@link #route()} is over.
	 * @param route where it went
	 */
	public void done(Route route) {
		if (route == Route.PROBE) {
			this.probing.set(false);
		}
	}

	/**
	 * The server answered a call within the timeout.
	 * @return whether that ended an outage
	 */
	public boolean succeeded() {
		this.consecutiveFailures.set(0);
		return this.outage.get() != null && this.outage.getAndSet(null) != null;
	}

	/**
	 * The server did not answer a call, or not within the timeout.
	 * @param failure the failure, the outage's cause if it begins one
	 * @param kind why the server did not answer
	 * @param sentNanos when the call was sent, on the detector's clock
	 * @return whether that began an outage
	 */
	public boolean failed(F failure, FailureKind kind, long sentNanos) {
		if (!kind.blamesServer()) {
			return false;
		}
		int failures = this.consecutiveFailures.incrementAndGet();
		if (failures == 1) {
			this.firstFailureSent = sentNanos;
		}
		Outage<F> current = this.outage.get();
		if (current != null) {
			current.last = failure;
			return false;
		}
		boolean sustained = failures >= FAILURES_TO_SWITCH
				&& sentNanos - this.firstFailureSent >= this.timeoutNanos;
		return (kind == FailureKind.UNREACHABLE || sustained)
				&& this.outage.compareAndSet(null, new Outage<>(this.ticker.nanoTime(), failure));
	}

	/**
	 * Returns the last failure while the server is failing.
	 * @return the failure, null while the server answers
	 */
	public @Nullable F failing() {
		Outage<F> current = this.outage.get();
		return (current != null) ? current.last : null;
	}

	/** The failure policy made one decision, during an outage or for one call that the server did not answer. */
	public void failurePolicyDecided() {
		this.decisions.increment();
		Outage<F> current = this.outage.get();
		if (current != null) {
			current.decisions.increment();
		}
	}

	/**
	 * Returns how the failure policy stands in this part of the key space.
	 * @param policy the store's failure policy
	 * @return the status
	 */
	public FailureStatus status(FailurePolicy policy) {
		Outage<F> current = this.outage.get();
		if (current == null) {
			return new FailureStatus(policy, null, this.decisions.sum(), 0);
		}
		// the outage's count first: every decision counts in all before it counts in the outage
		long duringOutage = current.decisions.sum();
		return new FailureStatus(policy, Duration.ofNanos(this.ticker.nanoTime() - current.began),
				this.decisions.sum(), duringOutage);
	}

	/** One outage: when the store switched to the failure policy, its last failure, and what it decided since. */
	private static final class Outage<F> {

		final long began;

		volatile F last;

		final LongAdder decisions = new LongAdder();

		Outage(long began, F first) {
			this.began = began;
			this.last = first;
		}

	}

}
