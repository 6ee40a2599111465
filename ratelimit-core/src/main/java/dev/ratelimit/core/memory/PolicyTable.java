package dev.ratelimit.core.memory;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;

import dev.ratelimit.core.Decision;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.RateLimiter;

/**
 * One policy, at one cost per request, deciding over the states of its {@link KeyTable}: every cost of a policy
 * shares the same states, so that each key has one quota whatever its requests cost.
 */
final class PolicyTable implements RateLimiter {

	final KeyTable keys;

	final Rules rules;

	PolicyTable(KeyTable keys, RateLimitPolicy policy) {
		this.keys = keys;
		this.rules = (policy.equals(keys.rules.policy)) ? keys.rules : new Rules(policy, keys.store.wallOrigin);
	}

	@Override
	public RateLimitPolicy policy() {
		return this.rules.policy;
	}

	@Override
	public Decision decide(String key) {
		if (this.rules.penalty > 0) {
			// the penalty is read and set while the state is held
			return this.keys.store.decideHeld(this, key);
		}
		for (;;) {
			KeyState state = this.keys.state(key);
			Decision decision = state.decide(this.rules, this.keys.store);
			if (decision != null) {
				return decision;
			}
			this.keys.rebase(key, state);
		}
	}

	@Override
	public Decision decide(String key, long permits) {
		RateLimitPolicy policy = this.rules.policy;
		return (permits == policy.cost()) ? decide(key) : this.keys.store.limiter(policy.withCost(permits)).decide(key);
	}

	@Override
	public boolean tryAcquire(String key) {
		if (this.rules.penalty > 0) {
			return decide(key).allowed();
		}
		for (;;) {
			KeyState state = this.keys.state(key);
			int result = state.tryAcquire(this.rules, this.keys.store);
			if (result != KeyState.AGAIN) {
				return result == KeyState.ALLOWED;
			}
			this.keys.rebase(key, state);
		}
	}

	@Override
	public Decision acquire(String key, Duration maxWait) throws InterruptedException {
		Decision decision = waiting(maxWait).decide(key);
		if (decision.allowed()) {
			this.keys.store.timeSource().sleep(this.keys.store.untilDue(decision));
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
				? this.keys.store.timeSource().after(this.keys.store.untilDue(decision)).thenApply((none) -> decision)
				: CompletableFuture.completedFuture(decision);
	}

	/** This policy's limiter for requests that wait up to {@code maxWait}, on the same states. */
	private PolicyTable waiting(Duration maxWait) {
		RateLimitPolicy policy = this.rules.policy;
		return maxWait.equals(policy.maxWait()) ? this : this.keys.store.table(policy.withMaxWait(maxWait));
	}

}
