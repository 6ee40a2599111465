package dev.ratelimit.core.internal;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import java.util.function.LongSupplier;

import dev.ratelimit.core.KeyedPolicy;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.RateLimitStore;

/**
 * The limiter of every policy of a shared store, and the runtime changes that made some of them: a changed policy
 * keeps its states under a name of its own, made of its values ({@link StateNames}), and its limiter knows the
 * policies it changed from, whose states carry their permits over to it until every key of them is full again.
 * @param <L> the store's limiter
 */
public final class PolicyLimiters<L> {

	/** How many policies, each cost counted apart, keep their limiter. */
	private static final int MAX_LIMITERS = 1024;

	private final Factory<L> factory;

	private final Function<L, String> stateName;

	private final LongSupplier nowNanos;

	private final ConcurrentHashMap<RateLimitPolicy, L> limiters = new ConcurrentHashMap<>();

	/** The policy each changed policy had before its first change, at one permit, by name. */
	private final ConcurrentHashMap<String, RateLimitPolicy> originals = new ConcurrentHashMap<>();

	/** The policy each changed policy is now, at one permit, and what it changed from, by name. */
	private final ConcurrentHashMap<String, Transition<L>> transitions = new ConcurrentHashMap<>();

	/**
	 * Keeps the limiters that {@code factory} makes.
	 * @param factory makes a store's limiter
	 * @param stateName the name of the states of a limiter that the factory made
	 * @param nowNanos now, in the clock of {@link Predecessor#untilNanos()}
	 */
	public PolicyLimiters(Factory<L> factory, Function<L, String> stateName, LongSupplier nowNanos) {
		this.factory = factory;
		this.stateName = stateName;
		this.nowNanos = nowNanos;
	}

	/**
	 * The limiter of a policy.
	 * @param policy the policy, as the request asks for it
	 * @return its limiter
	 */
	public L limiter(RateLimitPolicy policy) {
		L limiter = this.limiters.get(policy);
		if (limiter != null) {
			return limiter;
		}
		Objects.requireNonNull(policy, "policy must not be null");
		// costs computed per request would grow the cache without bound: beyond it, a limiter per request
		return (this.limiters.size() < MAX_LIMITERS) ? this.limiters.computeIfAbsent(policy, this::newLimiter)
				: newLimiter(policy);
	}

	/**
	 * The limiters of the limits of one request, checked by {@link RateLimitStore#checkStack}.
	 * @param limits the request's limits
	 * @return their limiters, in their order
	 */
	public List<L> limiters(List<KeyedPolicy> limits) {
		List<L> limiters = new ArrayList<>(limits.size());
		for (KeyedPolicy limit : limits) {
			limiters.add(limiter(limit.policy()));
		}
		return limiters;
	}

	/**
	 * The limiters of each stack of policies, checked as a stack, on a client key of the warm-up's.
	 * @param stacks the stacks of policies to warm up
	 * @param warmUpClient the key that the warm-up decides on, which no client has
	 * @return each stack's limiters
	 */
	public List<List<L>> warmUpLimiters(Collection<List<RateLimitPolicy>> stacks, String warmUpClient) {
		List<List<L>> limiters = new ArrayList<>(stacks.size());
		for (List<RateLimitPolicy> stack : stacks) {
			List<KeyedPolicy> limits = new ArrayList<>(stack.size());
			stack.forEach((policy) -> limits.add(new KeyedPolicy(warmUpClient, policy)));
			RateLimitStore.checkStack(limits);
			limiters.add(limiters(limits));
		}
		return limiters;
	}

	/**
	 * Decides the keys of {@code from} under {@code to} from now on, as {@link RateLimitStore#change} says.
	 * @param from the policy before the change
	 * @param to the policy after it
	 */
	public void change(RateLimitPolicy from, RateLimitPolicy to) {
		if (!RateLimitStore.checkChange(from, to)) {
			return;
		}
		RateLimitPolicy previous = from.shared();
		RateLimitPolicy next = to.shared();
		synchronized (this.transitions) {
			RateLimitPolicy original = this.originals.computeIfAbsent(previous.name(), (name) -> previous);
			String target = StateNames.of(next, original);
			long now = this.nowNanos.getAsLong();
			List<Predecessor<L>> predecessors = new ArrayList<>();
			predecessors.add(new Predecessor<>(
					this.factory.limiter(previous, StateNames.of(previous, original), List.of()),
					now + from.fullAfter().toNanos()));
			Transition<L> before = this.transitions.get(previous.name());
			if (before != null && before.policy().equals(previous)) {
				for (Predecessor<L> older : before.predecessors()) {
					String olderName = this.stateName.apply(older.limiter());
					if (predecessors.size() < RateLimitStore.MAX_CARRIED_CHANGES && older.untilNanos() > now
							&& !olderName.equals(target) && predecessors.stream()
								.noneMatch((kept) -> this.stateName.apply(kept.limiter()).equals(olderName))) {
						predecessors.add(older);
					}
				}
			}
			this.transitions.put(next.name(), new Transition<>(next, List.copyOf(predecessors)));
			this.limiters.keySet().removeIf((policy) -> policy.name().equals(next.name()));
		}
	}

	/** A limiter of {@code policy}, with the name of its state and, if a change made it, what it changed from. */
	private L newLimiter(RateLimitPolicy policy) {
		RateLimitPolicy original = this.originals.get(policy.name());
		String stateName = (original != null) ? StateNames.of(policy, original) : policy.name();
		Transition<L> transition = this.transitions.get(policy.name());
		return this.factory.limiter(policy, stateName,
				(transition != null && transition.policy().equals(policy.shared())) ? transition.predecessors()
						: List.of());
	}

	/**
	 * Makes a store's limiters.
	 * @param <L> the store's limiter
	 */
	@FunctionalInterface
	public interface Factory<L> {

		/**
		 * A limiter of a policy.
		 * @param policy the policy
		 * @param stateName the name of its states
		 * @param predecessors the policies it changed from, newest first, whose states carry their permits over
		 * to it until each is full again
		 * @return the limiter
		 */
		L limiter(RateLimitPolicy policy, String stateName, List<Predecessor<L>> predecessors);

	}

	/**
	 * A policy that a limiter's policy changed from, at a cost of one permit, and the instant from which every key
	 * of it is full again and carries nothing over.
	 * @param <L> the store's limiter
	 * @param limiter the limiter of the policy before the change
	 * @param untilNanos that instant, in the clock of the store's calls
	 */
	public record Predecessor<L>(L limiter, long untilNanos) {
	}

	/** The policy a changed policy is now, at one permit, and the ones it changed from, newest first. */
	private record Transition<L>(RateLimitPolicy policy, List<Predecessor<L>> predecessors) {
	}

}
