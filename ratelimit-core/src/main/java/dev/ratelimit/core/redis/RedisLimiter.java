package dev.ratelimit.core.redis;

import java.util.List;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.Decision;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.RateLimiter;

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

	private final String burst;

	private final String cost;

	private final String delayAfter;

	/** The name of the policy's state in its keys: its name, unless a runtime change made the policy. */
	final String stateName;

	/**
	 * The policies this one changed from, newest first, whose keys carry their permits over to this one's
	 * until each is full again.
	 */
	final List<Predecessor> predecessors;

	RedisLimiter(KeyDecisions decisions, RateLimitPolicy policy, String stateName, List<Predecessor> predecessors) {
		LuaExactness.check(policy);
		this.decisions = decisions;
		this.policy = policy;
		this.stateName = stateName;
		this.predecessors = predecessors;
		this.script = RedisScripts.get().standalone(policy.algorithm());
		this.scriptName = RedisScripts.fileName(policy.algorithm());
		this.limit = Long.toString(policy.limit());
		this.window = Long.toString(policy.windowMicros());
		this.burst = Long.toString(policy.burst());
		this.cost = Long.toString(policy.cost());
		this.delayAfter = Long.toString(policy.delayAfter());
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

	/**
	 * ARGV of the algorithm's own script; only the leaky bucket reads a sixth, a deadline is the seventh, and
	 * whether the caller expects the state key to exist the eighth.
	 */
	List<String> standaloneArgs(String now, String deadline, String expect) {
		String delayAfter = (this.policy.algorithm() == Algorithm.LEAKY_BUCKET) ? this.delayAfter : "";
		if (!expect.isEmpty()) {
			return List.of(this.limit, this.window, this.burst, this.cost, now, delayAfter, deadline, expect);
		}
		if (!deadline.isEmpty()) {
			return List.of(this.limit, this.window, this.burst, this.cost, now, delayAfter, deadline);
		}
		return (this.policy.algorithm() == Algorithm.LEAKY_BUCKET)
				? List.of(this.limit, this.window, this.burst, this.cost, now, this.delayAfter)
				: List.of(this.limit, this.window, this.burst, this.cost, now);
	}

	/** This policy's six values in the ARGV of the give-back script, for a request taken at {@code takenAt}. */
	void addGiveBackArgs(List<String> args, long takenAt) {
		args.add(this.scriptName);
		args.add(this.limit);
		args.add(this.window);
		args.add(this.burst);
		args.add(this.cost);
		args.add(Long.toString(takenAt));
	}

	/** This policy's six values in the ARGV of the carry-over script. */
	void addCarryOverArgs(List<String> args) {
		args.add(this.scriptName);
		args.add(this.limit);
		args.add(this.window);
		args.add(this.burst);
		args.add(Long.toString(this.policy.capacity()));
		args.add(this.delayAfter);
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
		args.add(this.window);
		args.add(this.burst);
		args.add(cost);
		args.add(this.delayAfter);
	}

	/**
	 * A policy that a limiter's policy changed from, at a cost of one permit, and the instant (in the clock of
	 * {@link DecisionCalls#now()}) from which every key of it is full again and carries nothing over.
	 */
	record Predecessor(RedisLimiter limiter, long untilNanos) {
	}

}
