package dev.ratelimit.core.redis;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.CalendarWindow;
import dev.ratelimit.core.Decision;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.RateLimiter;
import dev.ratelimit.core.internal.PolicyLimiters.Predecessor;
import org.jspecify.annotations.Nullable;

/**
 * One policy of a {@link RedisRateLimitStore}, with its script and its arguments written out once, and the
 * policies it changed from at runtime.
 */
final class RedisLimiter implements RateLimiter {

	private final KeyDecisions decisions;

	private final RateLimitPolicy policy;

	final RedisScripts.Script script;

	private final String scriptName;

	private final String limit;

	private final String window;

	/** The window argument of a calendar window, written per period; null for a window of a fixed length. */
	private final @Nullable CalendarArgument calendar;

	private final String burst;

	private final String cost;

	/**
	 * The sixth value of the policy in every script: the leaky bucket's delay-after, how long a request of the
	 * other bucket algorithms may wait, in microseconds.
	 */
	private final String shaping;

	/** The policy's penalty in microseconds, which only the stacked script applies; "0" for none. */
	final String penalty;

	/** The name of the policy's state in its keys: its name, unless a runtime change made the policy. */
	final String stateName;

	/**
	 * The policies this one changed from, newest first, whose keys carry their permits over to this one's
	 * until each is full again.
	 */
	final List<Predecessor<RedisLimiter>> predecessors;

	RedisLimiter(KeyDecisions decisions, RateLimitPolicy policy, String stateName,
			List<Predecessor<RedisLimiter>> predecessors) {
		LuaExactness.check(policy);
		this.decisions = decisions;
		this.policy = policy;
		this.stateName = stateName;
		this.predecessors = predecessors;
		this.script = RedisScripts.get().standalone(policy.algorithm());
		this.scriptName = RedisScripts.fileName(policy.algorithm());
		this.limit = Long.toString(policy.limit());
		this.window = Long.toString(policy.windowMicros());
		CalendarWindow calendar = policy.calendar();
		this.calendar = (calendar != null) ? new CalendarArgument(calendar) : null;
		this.burst = Long.toString(policy.burst());
		this.cost = Long.toString(policy.cost());
		this.shaping = Long.toString((policy.algorithm() == Algorithm.LEAKY_BUCKET) ? policy.delayAfter()
				: policy.maxWaitMicros());
		this.penalty = Long.toString(policy.penaltyMicros());
	}

	/** The window of every script's arguments: its periods around now for a calendar window. */
	private String window() {
		CalendarArgument calendar = this.calendar;
		return (calendar != null) ? calendar.at(this.decisions.wallMicros()) : this.window;
	}

	@Override
	public RateLimitPolicy policy() {
		return this.policy;
	}

	/** This limiter at another cost, on the same states, at most the policy's capacity. */
	RedisLimiter withCost(long cost) {
		return new RedisLimiter(this.decisions, this.policy.withCost(Math.min(cost, this.policy.capacity())),
				this.stateName, this.predecessors);
	}

	@Override
	public Decision decide(String key) {
		return this.decisions.decide(key, List.of(this)).get(0);
	}

	@Override
	public Decision decide(String key, long permits) {
		RedisLimiter limiter = (permits == this.policy.cost()) ? this
				: new RedisLimiter(this.decisions, this.policy.withCost(permits), this.stateName, this.predecessors);
		return limiter.decide(key);
	}

	@Override
	public boolean tryAcquire(String key) {
		return decide(key).allowed();
	}

	@Override
	public Decision acquire(String key, Duration maxWait) throws InterruptedException {
		Decision decision = waiting(maxWait).decide(key);
		if (decision.allowed()) {
			this.decisions.clock.sleep(this.decisions.untilDue(decision));
		}
		return decision;
	}

	@Override
	public CompletableFuture<Decision> acquireAsync(String key, Duration maxWait) {
		RedisLimiter limiter;
		try {
			limiter = waiting(maxWait);
		}
		catch (RuntimeException ex) {
			return CompletableFuture.failedFuture(ex);
		}
		return this.decisions.decide(key, List.of(limiter), false).thenCompose((decisions) -> {
			Decision decision = decisions.get(0);
			return decision.allowed()
					? this.decisions.clock.after(this.decisions.untilDue(decision)).thenApply((none) -> decision)
					: CompletableFuture.completedFuture(decision);
		});
	}

	/** This limiter for requests that wait up to {@code maxWait}, on the same states. */
	private RedisLimiter waiting(Duration maxWait) {
		return maxWait.equals(this.policy.maxWait()) ? this
				: new RedisLimiter(this.decisions, this.policy.withMaxWait(maxWait), this.stateName, this.predecessors);
	}

	/**
	 * ARGV of the algorithm's own script: the sixth, the {@link #shaping}, is empty when zero, and left out where
	 * nothing follows it; a deadline is the seventh, and whether the caller expects the state key to exist the eighth.
	 */
	List<String> standaloneArgs(String now, String deadline, String expect) {
		String shaping = this.shaping.equals("0") ? "" : this.shaping;
		if (!expect.isEmpty()) {
			return List.of(this.limit, window(), this.burst, this.cost, now, shaping, deadline, expect);
		}
		if (!deadline.isEmpty()) {
			return List.of(this.limit, window(), this.burst, this.cost, now, shaping, deadline);
		}
		return shaping.isEmpty() ? List.of(this.limit, window(), this.burst, this.cost, now)
				: List.of(this.limit, window(), this.burst, this.cost, now, shaping);
	}

	/** This policy's six values in the ARGV of the give-back script, for a request taken at {@code takenAt}. */
	void addGiveBackArgs(List<String> args, long takenAt) {
		args.add(this.scriptName);
		args.add(this.limit);
		args.add(window());
		args.add(this.burst);
		args.add(this.cost);
		args.add(Long.toString(takenAt));
	}

	/** This policy's six values in the ARGV of the carry-over script. */
	void addCarryOverArgs(List<String> args) {
		args.add(this.scriptName);
		args.add(this.limit);
		args.add(window());
		args.add(this.burst);
		args.add(Long.toString(this.policy.capacity()));
		args.add(this.shaping);
	}

	/** This policy's six values in the ARGV of the stacked script. */
	void addStackedArgs(List<String> args) {
		addStackedArgs(args, this.cost);
	}

	/**
	 * This policy's six values in the ARGV of the stacked script restoring a state that Redis lost, with the
	 * permits Redis last said were left in place of the cost.
	 */
	void addRestoreArgs(List<String> args, long remaining) {
		addStackedArgs(args, Long.toString(remaining));
	}

	private void addStackedArgs(List<String> args, String cost) {
		args.add(this.scriptName);
		args.add(this.limit);
		args.add(window());
		args.add(this.burst);
		args.add(cost);
		args.add(this.shaping);
	}

}
