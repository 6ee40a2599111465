package dev.ratelimit.core.redis;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;

import org.jspecify.annotations.Nullable;

import dev.ratelimit.core.Decision;
import dev.ratelimit.core.KeyedPolicy;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.RateLimitStore;
import dev.ratelimit.core.internal.FailureListeners;
import dev.ratelimit.core.internal.PolicyLimiters;

/**
 * Decides and gives back the limits of one request: through {@link KeyDecisions} when they are all on one key;
 * else in one atomic call on a single Redis, and on a Cluster, where the keys of different clients may lie in
 * different slots, in one atomic call per slot, in the order of the slots, so that no limit ever admits more
 * than it allows. Each call is waited for, or sent once the one before it has been answered, from the thread
 * that completed it.
 */
final class StackDecisions {

	private final DecisionCalls calls;

	private final StoreFailures failures;

	private final RedisFleet fleet;

	private final KeyDecisions decisions;

	private final PolicyLimiters<RedisLimiter> transitions;

	private final KnownStates known;

	private final boolean cluster;

	StackDecisions(DecisionCalls calls, StoreFailures failures, RedisFleet fleet, KeyDecisions decisions,
			PolicyLimiters<RedisLimiter> transitions, KnownStates known, boolean cluster) {
		this.calls = calls;
		this.failures = failures;
		this.fleet = fleet;
		this.decisions = decisions;
		this.transitions = transitions;
		this.known = known;
		this.cluster = cluster;
	}

	/** Decides the limits of one request, checked by {@link RateLimitStore#checkStack}. */
	CompletableFuture<List<Decision>> decide(List<KeyedPolicy> limits, boolean wait) {
		List<RedisLimiter> limiters = this.transitions.limiters(limits);
		String key = sharedKey(limits);
		return (key != null) ? this.decisions.decide(key, limiters, wait) : decideAcross(limits, limiters, wait);
	}

	/** The key every limit is on, or null when they differ. */
	private static @Nullable String sharedKey(List<KeyedPolicy> limits) {
		String key = limits.get(0).key();
		for (KeyedPolicy limit : limits) {
			if (!limit.key().equals(key)) {
				return null;
			}
		}
		return key;
	}

	/**
	 * Decides one request under limits on several keys, each slot taking only if it allows. When a slot denies,
	 * the slots before it are given their permits back, and every other slot is asked what it would answer
	 * without taking; a slot that cannot be asked reports no permits left and no wait of its own, and the request
	 * stays denied. When a call fails after earlier slots took, the failure policy decides the whole request; if
	 * it denies, the earlier slots are given their permits back. A give-back that fails leaves them taken:
	 * stricter, never more lenient.
	 */
	private CompletableFuture<List<Decision>> decideAcross(List<KeyedPolicy> limits, List<RedisLimiter> limiters,
			boolean wait) {
		this.fleet.start();
		Across across = new Across(limits, limiters, wait);
		return this.failures.decide(limits, (done) -> {
			long sent = this.calls.now();
			List<KnownStates.Known> known = this.known.sending(limits);
			return this.calls.carryOver(across.clients, limiters, sent, wait)
				.thenCompose((none) -> across.take(0, sent))
				.handle((denied, ex) -> {
					try {
						if (ex != null) {
							KnownStates.failed(known, sent, ex);
							return across.failed(this.failures.failed(limits, ScriptCaller.failure(ex)));
						}
					}
					finally {
						done.run();
					}
					return ((denied >= 0) ? across.denied(denied)
							: CompletableFuture.completedFuture(across.decisions())).thenApply((decisions) -> {
								this.known.answered(known, decisions, sent);
								return decisions;
							});
				})
				.thenCompose(Function.identity());
		});
	}

	/**
	 * Gives back what the allowed decisions took, in one script call, or on a Cluster one per slot, and forgets
	 * the local denials of their keys. A call that fails leaves its permits taken, which is stricter, never more
	 * lenient; it is counted in the log and told to the failure listeners.
	 */
	CompletableFuture<Void> giveBack(List<KeyedPolicy> limits, List<Decision> decisions, boolean wait) {
		RateLimitStore.checkGiveBack(limits, decisions);
		List<RedisLimiter> limiters = this.transitions.limiters(limits);
		List<Integer> taken = new ArrayList<>(limits.size());
		for (int i = 0; i < limits.size(); i++) {
			if (decisions.get(i).taken()) {
				taken.add(i);
			}
		}
		List<String> clients = clients(limits);
		CompletableFuture<Void> given = DecisionCalls.DONE;
		for (List<Integer> group : groups(clients, taken)) {
			given = given.thenCompose((none) -> giveBack(limits, clients, limiters, decisions, group, wait));
		}
		return given.thenRun(() -> {
			for (KeyedPolicy limit : limits) {
				this.decisions.forget(limit.key());
			}
		});
	}

	/** Gives back the limits at {@code group}, in one call; one that fails leaves them taken. */
	private CompletableFuture<Void> giveBack(List<KeyedPolicy> limits, List<String> clients,
			List<RedisLimiter> limiters, List<Decision> decisions, List<Integer> group, boolean wait) {
		return this.calls.giveBack(pick(clients, group), pick(limiters, group), pick(decisions, group), wait)
			.handle((reply, ex) -> {
				if (ex != null) {
					this.failures.giveBackFailed(pick(FailureListeners.policies(limits), group),
							ScriptCaller.failure(ex).getCause());
				}
				return null;
			});
	}

	/**
	 * The limits at {@code indexes} in the groups that one script call may touch: all of them on a single
	 * Redis, else one group per Cluster slot, in the order of the slots.
	 */
	private List<List<Integer>> groups(List<String> clients, List<Integer> indexes) {
		if (indexes.isEmpty()) {
			return List.of();
		}
		if (!this.cluster) {
			return List.of(indexes);
		}
		TreeMap<Integer, List<Integer>> bySlot = new TreeMap<>();
		for (int i : indexes) {
			bySlot.computeIfAbsent(RedisKeys.slot(clients.get(i)), (slot) -> new ArrayList<>()).add(i);
		}
		return new ArrayList<>(bySlot.values());
	}

	private static List<String> clients(List<KeyedPolicy> limits) {
		List<String> clients = new ArrayList<>(limits.size());
		for (KeyedPolicy limit : limits) {
			clients.add(RedisKeys.escape(limit.key()));
		}
		return clients;
	}

	private static <T> List<T> pick(List<T> values, List<Integer> indexes) {
		List<T> picked = new ArrayList<>(indexes.size());
		for (int i : indexes) {
			picked.add(values.get(i));
		}
		return picked;
	}

	/** One request decided slot by slot: the decisions and the permits each slot holds, one call after another. */
	private final class Across {

		final List<KeyedPolicy> limits;

		final List<RedisLimiter> limiters;

		final List<String> clients;

		final List<List<Integer>> groups;

		private final Decision[] decisions;

		private final boolean[] holding;

		private final boolean wait;

		Across(List<KeyedPolicy> limits, List<RedisLimiter> limiters, boolean wait) {
			this.limits = limits;
			this.limiters = limiters;
			this.clients = clients(limits);
			List<Integer> all = new ArrayList<>(limits.size());
			for (int i = 0; i < limits.size(); i++) {
				all.add(i);
			}
			this.groups = groups(this.clients, all);
			this.decisions = new Decision[limits.size()];
			this.holding = new boolean[this.groups.size()];
			this.wait = wait;
		}

		/** Takes from {@code group} and the groups after it until one denies; completes with that one, or -1. */
		CompletableFuture<Integer> take(int group, long sent) {
			if (group == this.groups.size()) {
				return CompletableFuture.completedFuture(-1);
			}
			return decide(group, sent, false).thenCompose((first) -> {
				this.holding[group] = first.taken();
				return first.allowed() ? take(group + 1, sent) : CompletableFuture.completedFuture(group);
			});
		}

		/** Decides the limits of {@code group} in one call into the decisions, and completes with the first. */
		private CompletableFuture<Decision> decide(int group, long sent, boolean peek) {
			List<Integer> indexes = this.groups.get(group);
			return StackDecisions.this.calls
				.decide(pick(this.clients, indexes), pick(this.limiters, indexes), sent, peek, this.wait)
				.thenApply((reply) -> {
					for (int k = 0; k < indexes.size(); k++) {
						this.decisions[indexes.get(k)] = reply.get(k);
					}
					return reply.get(0);
				});
		}

		/** A request that {@code denied} denied: what the others took goes back, and they are asked instead. */
		CompletableFuture<List<Decision>> denied(int denied) {
			CompletableFuture<Void> asked = giveBackHeld();
			for (int group = 0; group < this.groups.size(); group++) {
				if (group != denied) {
					int other = group;
					asked = asked.thenCompose((none) -> peek(other));
				}
			}
			return asked.thenApply((none) -> decisions());
		}

		/** A call that failed, after which the failure policy {@code decided}: what it denied goes back. */
		CompletableFuture<List<Decision>> failed(List<Decision> decided) {
			if (decided.get(0).allowed()) {
				return CompletableFuture.completedFuture(decided);
			}
			return giveBackHeld().thenApply((none) -> decided);
		}

		/** What the limits of {@code group} answer to a request another limit denied, without taking. */
		private CompletableFuture<Void> peek(int group) {
			return decide(group, StackDecisions.this.calls.now(), true).handle((first, ex) -> {
				if (ex != null) {
					StackDecisions.this.failures.unanswered(ScriptCaller.failure(ex));
					for (int i : this.groups.get(group)) {
						RateLimitPolicy policy = this.limiters.get(i).policy();
						this.decisions[i] = new Decision(false, policy.limit(), 0, 0, policy.window().toNanos(), 0);
					}
				}
				return null;
			});
		}

		/** Gives back what the groups still holding permits took, once each. */
		private CompletableFuture<Void> giveBackHeld() {
			CompletableFuture<Void> given = DecisionCalls.DONE;
			List<Decision> taken = Arrays.asList(this.decisions);
			for (int group = 0; group < this.groups.size(); group++) {
				if (this.holding[group]) {
					this.holding[group] = false;
					List<Integer> indexes = this.groups.get(group);
					given = given.thenCompose(
							(none) -> giveBack(this.limits, this.clients, this.limiters, taken, indexes, this.wait));
				}
			}
			return given;
		}

		List<Decision> decisions() {
			return Arrays.asList(this.decisions);
		}

	}

}
