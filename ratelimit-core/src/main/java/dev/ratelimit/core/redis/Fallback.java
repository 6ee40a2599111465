package dev.ratelimit.core.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.IntSupplier;

import dev.ratelimit.core.Decision;
import dev.ratelimit.core.FailurePolicy;
import dev.ratelimit.core.KeyedPolicy;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.RateLimitStore;
import dev.ratelimit.core.internal.FailurePolicyDecisions;

/**
 * Decides as the {@link FailurePolicy} says when Redis does not. Under {@link FailurePolicy#LOCAL} each of the
 * {@code n} instances of a fleet decides from what Redis last told it of the key, the {@link KnownStates known
 * state}: of the {@code r} permits Redis said were left, it admits at most {@code ceil(r / n)}, less the calls
 * Redis may have run unbeknown to it, and never more than its share of the limit, {@code ceil(limit / n)}
 * (likewise of a burst), per window. A key Redis told it nothing of that still holds takes one request per window
 * on each instance, the most that keeps the bound whatever Redis admitted through the others. What it admits is
 * owed to Redis, and told once Redis answers again.
 */
final class Fallback {

	private final FailurePolicy policy;

	private final RateLimitStore local;

	private final IntSupplier instances;

	private final KnownStates known;

	/** At most this many policies, costs apart, keep their share, so that costs computed per request cannot grow it. */
	private static final int MAX_SHARES = 1024;

	/** Each policy's share for the fleet size it was last computed for. */
	private final ConcurrentHashMap<RateLimitPolicy, Share> shares = new ConcurrentHashMap<>();

	Fallback(FailurePolicy policy, RateLimitStore local, IntSupplier instances, KnownStates known) {
		this.policy = policy;
		this.local = local;
		this.instances = instances;
		this.known = known;
	}

	/**
	 * A permit of a request in flight that Redis did not decide: {@code ALLOW} grants it untracked, {@code DENY}
	 * refuses it, {@code LOCAL} takes one of this instance's share of the limit, {@code ceil(limit / instances)}.
	 */
	CompletionStage<RateLimitStore.InFlight.Permit> inFlight(String name, String key, long limit) {
		return FailurePolicyDecisions.inFlight(this.policy, this.local, this.instances.getAsInt(), name, key, limit);
	}

	FailurePolicy policy() {
		return this.policy;
	}

	/** Forgets what the failure policy admitted of every key, as when every client was reset. */
	void resetAll() {
		this.local.resetAll().ifPresent(RateLimitStore.ResetAll::resetAll);
	}

	/**
	 * What the failure policy would answer a request of one permit from {@code key} now, taking nothing: on the
	 * local store under {@code LOCAL}, with the share of the limit its decisions take.
	 */
	Decision inspect(String key, RateLimitPolicy policy) {
		return switch (this.policy) {
			case ALLOW -> new Decision(true, policy.limit(), policy.capacity(), 0, 0, 0);
			case DENY -> decide(List.of(new KeyedPolicy(key, policy))).get(0);
			case LOCAL -> {
				boolean holding = this.known.tracked(key, policy).holds(this.known.now());
				yield this.local.inspect(key,
						holding ? share(policy, this.instances.getAsInt()) : FailurePolicyDecisions.unseen(policy));
			}
		};
	}

	/** Decides the limits as the failure policy says; its decisions take nothing from Redis' state. */
	List<Decision> decide(List<KeyedPolicy> limits) {
		List<RateLimitPolicy> policies = limits.stream().map(KeyedPolicy::policy).toList();
		return switch (this.policy) {
			case ALLOW -> FailurePolicyDecisions.allowed(policies);
			case DENY -> FailurePolicyDecisions.denied(policies);
			case LOCAL -> decideLocally(limits);
		};
	}

	/**
	 * Decides the limits on the local store: a key Redis told of on this instance's share, once its part of what
	 * Redis said was left is taken, a key it did not on its one request per window. What is admitted is owed to
	 * Redis, to be told once it answers again.
	 */
	private List<Decision> decideLocally(List<KeyedPolicy> limits) {
		int instances = this.instances.getAsInt();
		long now = this.known.now();
		int size = limits.size();
		List<KeyedPolicy> local = new ArrayList<>(size);
		KnownStates.Known[] known = new KnownStates.Known[size];
		boolean[] holding = new boolean[size];
		for (int i = 0; i < size; i++) {
			KeyedPolicy limit = limits.get(i);
			known[i] = this.known.tracked(limit.key(), limit.policy());
			holding[i] = known[i].holds(now);
			// no reservation without Redis: a request that may wait is decided like any other
			RateLimitPolicy given = limit.policy().maxWait().isZero() ? limit.policy()
					: limit.policy().withMaxWait(Duration.ZERO);
			RateLimitPolicy policy = holding[i] ? share(given, instances) : FailurePolicyDecisions.unseen(given);
			local.add(new KeyedPolicy(limit.key(), policy));
		}
		for (int i = 0; i < size; i++) {
			if (holding[i] && !known[i].take(local.get(i).policy().cost(), instances)) {
				giveBack(known, holding, local, i);
				return spent(limits, known, i, instances, now);
			}
		}
		List<Decision> decisions = (size == 1)
				? List.of(this.local.limiter(local.get(0).policy()).decide(local.get(0).key()))
				: this.local.decideAll(local);
		boolean allowed = decisions.stream().allMatch(Decision::allowed);
		if (!allowed) {
			giveBack(known, holding, local, size);
		}
		List<Decision> answered = new ArrayList<>(size);
		for (int i = 0; i < size; i++) {
			Decision decision = decisions.get(i);
			if (allowed) {
				known[i].admitted(local.get(i).policy().cost(), now);
			}
			long remaining = holding[i] ? Math.min(decision.remaining(), known[i].left(instances))
					: decision.remaining();
			// not taken: a give-back to Redis must not find it so
			answered.add(new Decision(decision.allowed(), decision.limit(), remaining, decision.retryAfterNanos(),
					decision.resetAfterNanos(), decision.delayNanos()));
		}
		if (allowed) {
			this.known.owe();
		}
		return answered;
	}

	private static void giveBack(KnownStates.Known[] known, boolean[] holding, List<KeyedPolicy> local, int before) {
		for (int j = 0; j < before; j++) {
			if (holding[j]) {
				known[j].giveBack(local.get(j).policy().cost());
			}
		}
	}

	/**
	 * The decisions of a request that this instance's part of what Redis said was left cannot take, for the
	 * limit at {@code spent}: denied until Redis said the key would be full again, the other limits without a
	 * wait of their own.
	 */
	private static List<Decision> spent(List<KeyedPolicy> limits, KnownStates.Known[] known, int spent,
			int instances, long now) {
		List<Decision> decisions = new ArrayList<>(limits.size());
		for (int i = 0; i < limits.size(); i++) {
			RateLimitPolicy policy = limits.get(i).policy();
			long remaining = known[i].holds(now) ? known[i].left(instances) : 0;
			long resetAfter = known[i].holds(now) ? Math.max(0, known[i].until() - now) : 0;
			decisions.add(new Decision(false, policy.limit(), remaining, (i == spent) ? resetAfter : 0, resetAfter,
					0));
		}
		return decisions;
	}

	private RateLimitPolicy share(RateLimitPolicy policy, int instances) {
		Share share = this.shares.get(policy);
		if (share == null || share.instances != instances) {
			share = new Share(instances, FailurePolicyDecisions.share(policy, instances));
			if (this.shares.size() < MAX_SHARES) {
				this.shares.put(policy, share);
			}
		}
		return share.policy;
	}

	private record Share(int instances, RateLimitPolicy policy) {
	}

}
