package dev.ratelimit.core.jdbc;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import org.jspecify.annotations.Nullable;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.CalendarWindow;
import dev.ratelimit.core.Decision;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.internal.CalendarBounds;
import dev.ratelimit.core.RateLimiter;
import dev.ratelimit.core.internal.PolicyLimiters.Predecessor;

/**
 * One policy of a {@link JdbcRateLimitStore}: the name of its state in the table, the values the database
 * functions read, and the policies it changed from at runtime.
 */
final class JdbcLimiter implements RateLimiter {

	private final StateCalls calls;

	private final Decider decider;

	private final RateLimitPolicy policy;

	/** The name of the policy's state in the table: its name, unless a runtime change made the policy. */
	final String stateName;

	/**
	 * The policies this one changed from, newest first, whose states carry their permits over to this one's
	 * until each is full again.
	 */
	final List<Predecessor<JdbcLimiter>> predecessors;

	private final @Nullable CalendarBounds calendar;

	JdbcLimiter(StateCalls calls, Decider decider, RateLimitPolicy policy, String stateName,
			List<Predecessor<JdbcLimiter>> predecessors) {
		this.calls = calls;
		this.decider = decider;
		this.policy = policy;
		this.stateName = stateName;
		this.predecessors = predecessors;
		CalendarWindow calendar = policy.calendar();
		this.calendar = (calendar != null) ? new CalendarBounds(calendar) : null;
	}

	@Override
	public RateLimitPolicy policy() {
		return this.policy;
	}

	@Override
	public Decision decide(String key) {
		return this.decider.decide(key, this);
	}

	@Override
	public Decision decide(String key, long permits) {
		return ((permits == this.policy.cost()) ? this : with(this.policy.withCost(permits))).decide(key);
	}

	@Override
	public boolean tryAcquire(String key) {
		return decide(key).allowed();
	}

	@Override
	public Decision acquire(String key, Duration maxWait) throws InterruptedException {
		Decision decision = waiting(maxWait).decide(key);
		if (decision.allowed()) {
			this.calls.clock().sleep(this.calls.untilDue(decision));
		}
		return decision;
	}

	@Override
	public CompletableFuture<Decision> acquireAsync(String key, Duration maxWait) {
		Decision decision;
		try {
			decision = waiting(maxWait).decide(key);
		}
		catch (RuntimeException ex) {
			return CompletableFuture.failedFuture(ex);
		}
		return decision.allowed()
				? this.calls.clock().after(this.calls.untilDue(decision)).thenApply((none) -> decision)
				: CompletableFuture.completedFuture(decision);
	}

	/** This limiter for requests that wait up to {@code maxWait}, on the same states. */
	private JdbcLimiter waiting(Duration maxWait) {
		return maxWait.equals(this.policy.maxWait()) ? this : with(this.policy.withMaxWait(maxWait));
	}

	/** This limiter with {@code policy}'s cost or wait, on the same states. */
	JdbcLimiter with(RateLimitPolicy policy) {
		return new JdbcLimiter(this.calls, this.decider, policy, this.stateName, this.predecessors);
	}

	/**
	 * The sixth value of the policy in every function: the leaky bucket's delay-after, how long a request of the
	 * other bucket algorithms may wait, in microseconds.
	 */
	long shaping() {
		return (this.policy.algorithm() == Algorithm.LEAKY_BUCKET) ? this.policy.delayAfter()
				: this.policy.maxWaitMicros();
	}

	/** Writes the calendar's periods around {@code wallMicros} to {@code values} at {@code offset}, if it has one. */
	void addCalendar(long[] values, int offset, long wallMicros) {
		if (this.calendar != null) {
			System.arraycopy(this.calendar.at(wallMicros), 0, values, offset, CalendarBounds.SIZE);
		}
	}

	/** Decides one key under one limiter, in the database or by the store's failure policy. */
	@FunctionalInterface
	interface Decider {

		Decision decide(String key, JdbcLimiter limiter);

	}

}
