package dev.ratelimit.core.redis;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;

import dev.ratelimit.core.KeyedPolicy;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.RateLimitStore;
import dev.ratelimit.core.internal.StateNames;

/**
 * The limiter of every policy, and the runtime changes that made some of them: a changed policy keeps its
 * states under keys of their own, named after its values, and its limiter knows the policies it changed from,
 * whose keys carry their permits over to it (see {@link DecisionCalls#carryOver}) until every key of them is
 * full again.
 */
final class PolicyTransitions {

	/** How many policies, each cost counted apart, keep their limiter. */
	private static final int MAX_LIMITERS = 1024;

	private final KeyDecisions decisions;

	private final DecisionCalls calls;

	private final ConcurrentHashMap<RateLimitPolicy, RedisLimiter> limiters = new ConcurrentHashMap<>();

	/** The policy each changed policy had before its first change, at one permit, by name. */
	private final ConcurrentHashMap<String, RateLimitPolicy> originals = new ConcurrentHashMap<>();

	/** The policy each changed policy is now, at one permit, and what it changed from, by name. */
	private final ConcurrentHashMap<String, Transition> transitions = new ConcurrentHashMap<>();

	PolicyTransitions(KeyDecisions decisions, DecisionCalls calls) {
		this.decisions = decisions;
		this.calls = calls;
	}

	RedisLimiter limiter(RateLimitPolicy policy) {
		RedisLimiter limiter = this.limiters.get(policy);
		if (limiter != null) {
			return limiter;
		}
		Objects.requireNonNull(policy, "policy must not be null");
		// costs computed per request would grow the cache without bound: beyond it, a limiter per request
		return (this.limiters.size() < MAX_LIMITERS) ? this.limiters.computeIfAbsent(policy, this::newLimiter)
				: newLimiter(policy);
	}

	/** The limiters of the limits of one request, checked by {@link RateLimitStore#checkStack}. */
	List<RedisLimiter> limiters(List<KeyedPolicy> limits) {
		List<RedisLimiter> limiters = new ArrayList<>(limits.size());
		for (KeyedPolicy limit : limits) {
			limiters.add(limiter(limit.policy()));
		}
		return limiters;
	}

	/** A limiter of {@code policy}, with the name of its state and, if a change made it, what it changed from. */
	private RedisLimiter newLimiter(RateLimitPolicy policy) {
		RateLimitPolicy original = this.originals.get(policy.name());
		String stateName = (original != null) ? StateNames.of(policy, original) : policy.name();
		Transition transition = this.transitions.get(policy.name());
		return new RedisLimiter(this.decisions, policy, stateName,
				(transition != null && transition.policy().equals(policy.shared())) ? transition.predecessors()
						: List.of());
	}

	/**
	 * Decides the keys of {@code from} under {@code to} from now on, as {@link RedisRateLimitStore#change}
	 * says.
	 */
	void change(RateLimitPolicy from, RateLimitPolicy to) {
		if (!RateLimitStore.checkChange(from, to)) {
			return;
		}
		RateLimitPolicy previous = from.shared();
		RateLimitPolicy next = to.shared();
		synchronized (this.transitions) {
			RateLimitPolicy original = this.originals.computeIfAbsent(previous.name(), (name) -> previous);
			String target = StateNames.of(next, original);
			long now = this.calls.now();
			List<RedisLimiter.Predecessor> predecessors = new ArrayList<>();
			predecessors.add(new RedisLimiter.Predecessor(
					new RedisLimiter(this.decisions, previous, StateNames.of(previous, original), List.of()),
					now + from.fullAfter().toNanos()));
			Transition before = this.transitions.get(previous.name());
			if (before != null && before.policy().equals(previous)) {
				for (RedisLimiter.Predecessor older : before.predecessors()) {
					if (predecessors.size() < RateLimitStore.MAX_CARRIED_CHANGES && older.untilNanos() > now
							&& !older.limiter().stateName.equals(target) && predecessors.stream()
								.noneMatch((kept) -> kept.limiter().stateName.equals(older.limiter().stateName))) {
						predecessors.add(older);
					}
				}
			}
			this.transitions.put(next.name(), new Transition(next, List.copyOf(predecessors)));
			this.limiters.keySet().removeIf((policy) -> policy.name().equals(next.name()));
		}
	}

	/** The policy a changed policy is now, at one permit, and the ones it changed from, newest first. */
	private record Transition(RateLimitPolicy policy, List<RedisLimiter.Predecessor> predecessors) {
	}

	/** The limiters of each stack of policies, checked as a stack, on the warm-up's client key. */
	List<List<RedisLimiter>> warmUpLimiters(Collection<List<RateLimitPolicy>> stacks) {
		List<List<RedisLimiter>> limiters = new ArrayList<>(stacks.size());
		for (List<RateLimitPolicy> stack : stacks) {
			List<KeyedPolicy> limits = new ArrayList<>(stack.size());
			stack.forEach((policy) -> limits.add(new KeyedPolicy(RedisKeys.WARM_UP_CLIENT, policy)));
			RateLimitStore.checkStack(limits);
			limiters.add(limiters(limits));
		}
		return limiters;
	}

}
