package dev.ratelimit.core.redis;

import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

import dev.ratelimit.core.Decision;
import dev.ratelimit.core.KeyedPolicy;
import dev.ratelimit.core.TimeSource;
import dev.ratelimit.core.internal.FailureKind;
import org.jspecify.annotations.Nullable;

/**
 * Decides one request whose limits are all on one key, in one chain of steps for a caller that waits for Redis
 * and for one that must not: a denial that Redis gave the same request still in force, else the failure policy
 * during an outage, else the key's permits carried over from the policies it changed from and one script call,
 * whose reply is known for the failure policy and whose denial is kept, or whose failure the failure policy
 * decides. It also tells the state of a key without taking anything.
 */
final class KeyDecisions {

	private final DecisionCalls calls;

	private final StoreFailures failures;

	private final RedisFleet fleet;

	private final @Nullable LocalDenials denials;

	/** The clock that a request waiting for the permits it reserved waits on. */
	final TimeSource clock;

	/** Whether Redis decides at the instants of {@link #clock} rather than at its own {@code TIME}. */
	private final boolean clockDecides;

	private final KnownStates known;

	KeyDecisions(DecisionCalls calls, StoreFailures failures, RedisFleet fleet, @Nullable LocalDenials denials,
			KnownStates known, TimeSource clock, boolean clockDecides) {
		this.clock = clock;
		this.clockDecides = clockDecides;
		this.calls = calls;
		this.failures = failures;
		this.fleet = fleet;
		this.denials = denials;
		this.known = known;
	}

	/**
	 * The caller's now in Unix epoch microseconds, as the scripts read their now: the clock's when it decides,
	 * else the system's, which Redis' {@code TIME} follows.
	 */
	long wallMicros() {
		return this.clockDecides ? Math.floorDiv(this.clock.nanoTime(), 1000)
				: ChronoUnit.MICROS.between(Instant.EPOCH, Instant.now());
	}

	/**
	 * How long from now until an allowed request may go ahead: its delay counted from the instant Redis decided
	 * it at where that instant is in {@link #clock}, else from now, the reply's arrival, which is never early.
	 */
	long untilDue(Decision decision) {
		if (decision.delayNanos() == 0 || !this.clockDecides) {
			return decision.delayNanos();
		}
		return decision.takenAt() * 1000 + decision.delayNanos() - this.clock.nanoTime();
	}

	/** Decides one request of {@code key} under the given policies, waiting for Redis. */
	List<Decision> decide(String key, List<RedisLimiter> limiters) {
		return ScriptCaller.settled(decide(key, limiters, true));
	}

	/**
	 * Decides one request of {@code key} under the given policies; each call waited for if {@code wait}, else
	 * sent once the one before it has been answered, from the thread that completed it.
	 */
	CompletableFuture<List<Decision>> decide(String key, List<RedisLimiter> limiters, boolean wait) {
		this.fleet.start();
		long sent = this.calls.now();
		// read before the call, so that a reply to a call sent before the key was forgotten is not kept
		long epoch = (this.denials != null) ? this.denials.epoch() : 0;
		List<Decision> denied = (this.denials != null) ? this.denials.find(key, limiters, sent) : null;
		if (denied != null) {
			return CompletableFuture.completedFuture(denied);
		}
		List<KeyedPolicy> limits = keyed(key, limiters);
		return this.failures.decide(limits, (done) -> {
			List<String> clients = Collections.nCopies(limiters.size(), RedisKeys.escape(key));
			List<KnownStates.Known> known = this.known.sending(key, limiters);
			String expect = KnownStates.expected(known, sent);
			// known once, as soon as the reply arrives, so that a reply read later never overtakes it
			AtomicBoolean read = new AtomicBoolean();
			Consumer<List<Decision>> reader = (decisions) -> {
				if (read.compareAndSet(false, true)) {
					this.known.answered(known, decisions, sent);
				}
			};
			return restored(known, sent, wait)
				.thenCompose((none) -> this.calls.carryOver(clients, limiters, sent, wait))
				.thenCompose((none) -> tellOwed(clients, limiters, known, expect, sent, wait))
				.thenCompose((none) -> this.calls.decide(clients, limiters, sent, false, expect, wait, reader))
				.exceptionallyCompose((ex) -> restore(ex, clients, limiters, known, expect, sent, wait, reader))
				.handle((decisions, ex) -> {
					try {
						if (ex == null) {
							reader.accept(decisions);
							return replied(key, limiters, decisions, sent, epoch);
						}
						if (read.compareAndSet(false, true)) {
							KnownStates.failed(known, sent, ex);
						}
						return this.failures.failed(limits, ScriptCaller.failure(ex));
					}
					finally {
						done.run();
					}
				});
		});
	}

	/**
	 * Tells Redis, before it decides, what the failure policy admitted of the key on this instance without it, so
	 * that this decision and every later one counts them.
	 */
	private CompletableFuture<?> tellOwed(List<String> clients, List<RedisLimiter> limiters,
			List<KnownStates.Known> known, String expect, long sent, boolean wait) {
		CompletableFuture<?> told = DecisionCalls.DONE;
		for (int i = 0; i < limiters.size(); i++) {
			KnownStates.Known state = known.get(i);
			long owed = state.claim(sent);
			if (owed > 0) {
				RedisLimiter limiter = limiters.get(i);
				String client = clients.get(i);
				// a state Redis lost is restored before it is told anything
				String expects = expect.isEmpty() ? "" : expect.substring(i, i + 1);
				told = told.thenCompose((none) -> this.calls.charge(client, limiter, owed, sent, expects, wait))
					.whenComplete((none, ex) -> this.known.settled(state, owed, ex == null));
			}
		}
		return told;
	}

	/**
	 * Waits for the restorations under way of the keys' states that Redis had lost, so that no call decides on
	 * the empty state before Redis was told what was taken: as long as a call is waited for, if {@code wait}.
	 */
	private CompletableFuture<?> restored(List<KnownStates.Known> known, long sent, boolean wait) {
		CompletableFuture<?> restored = DecisionCalls.DONE;
		for (KnownStates.Known state : known) {
			CompletableFuture<?> restoring = state.restoring();
			if (restoring != null) {
				int partition = this.calls.partition(RedisKeys.escape(state.key));
				restored = restored.thenCompose((none) -> awaited(restoring, sent, partition, wait));
			}
		}
		return restored;
	}

	/**
	 * A restoration that another caller started, as a stage of this caller's chain: waited for as long as a call
	 * is if {@code wait}, and then failed if still under way.
	 */
	private CompletableFuture<?> awaited(CompletableFuture<?> restoring, long sent, int partition, boolean wait) {
		if (wait) {
			DecisionCalls.await(restoring, this.calls.maxWaitNanos());
			if (!restoring.isDone()) {
				// the caller that started it reports its call: this one counts no more towards an outage
				return CompletableFuture.failedFuture(new ScriptCaller.CallFailure(FailureKind.SLOW,
						new TimeoutException("Redis was not told in time what it had lost"), sent, true, partition));
			}
		}
		return restoring;
	}

	/**
	 * When the call failed because Redis had lost states that this instance expected it to hold, tells Redis
	 * the permits it last said were left under each, once per loss (a call that expected a state already being
	 * restored waits for that), then what the failure policy admitted meanwhile, and decides again; any other
	 * failure is passed on. Several instances may each tell Redis what they knew: Redis keeps the fewest permits
	 * left.
	 */
	private CompletableFuture<List<Decision>> restore(Throwable ex, List<String> clients,
			List<RedisLimiter> limiters, List<KnownStates.Known> known, String expect, long sent, boolean wait,
			Consumer<List<Decision>> reader) {
		Throwable cause = (ex instanceof CompletionException && ex.getCause() != null) ? ex.getCause() : ex;
		if (!(cause instanceof ScriptCaller.CallFailure failure) || failure.kind != FailureKind.LOST) {
			return CompletableFuture.failedFuture(ex);
		}
		long now = this.calls.now();
		CompletableFuture<?> restored = DecisionCalls.DONE;
		for (int i = 0; i < limiters.size(); i++) {
			if (expect.charAt(i) == '0') {
				continue;
			}
			RedisLimiter limiter = limiters.get(i);
			String client = clients.get(i);
			CompletableFuture<?> state = known.get(i).lost(sent, now, (left) -> {
				this.failures.stateLost();
				return this.calls.restore(client, limiter, left, now, wait);
			});
			int partition = this.calls.partition(client);
			restored = restored.thenCompose((none) -> awaited(state, sent, partition, wait));
		}
		// what the failure policy admitted is told to the restored states, as before any decision
		return restored.thenCompose((none) -> tellOwed(clients, limiters, known, "", sent, wait))
			.thenCompose((none) -> this.calls.decide(clients, limiters, sent, false, "", wait, reader));
	}

	/**
	 * Redis decided a request of one key: a denial is kept, and the key's state is known for the failure policy.
	 * A request that reserved permits past what was left pushed the key's refusals on: the denials kept for it
	 * tell too short a wait, and are forgotten.
	 */
	private List<Decision> replied(String key, List<RedisLimiter> limiters, List<Decision> decisions, long sent,
			long epoch) {
		if (this.denials != null) {
			if (reserved(limiters, decisions)) {
				this.denials.forget(key);
			}
			else {
				this.denials.keep(key, limiters, decisions, sent, epoch, this.calls.now());
			}
		}
		return decisions;
	}

	/**
	 * Whether a request that may wait for its permits reserved them past what was left; a leaky bucket's delay
	 * is a slot in its queue, as every request of it has, and changes nothing that a kept denial says.
	 */
	private static boolean reserved(List<RedisLimiter> limiters, List<Decision> decisions) {
		for (int i = 0; i < decisions.size(); i++) {
			Decision decision = decisions.get(i);
			if (decision.allowed() && decision.delayNanos() > 0 && !limiters.get(i).policy().maxWait().isZero()) {
				return true;
			}
		}
		return false;
	}

	/**
	 * Asks Redis what a request of one permit from {@code key} would be answered now, waiting at most the
	 * timeout, after carrying the key's permits over if its policy has just changed; when Redis does not answer,
	 * the failure policy does, as it would decide such a request, taking nothing.
	 */
	Decision inspect(String key, RedisLimiter limiter) {
		try {
			return ScriptCaller.done(inspect(key, limiter, true));
		}
		catch (ScriptCaller.CallFailure failure) {
			return this.failures.inspectByFailurePolicy(key, limiter.policy());
		}
	}

	/** Inspects as {@link #inspect} does, without waiting for Redis. */
	CompletableFuture<Decision> inspectAsync(String key, RedisLimiter limiter) {
		return inspect(key, limiter, false).exceptionally((ex) -> {
			// anything but Redis not answering is passed on
			ScriptCaller.failure(ex);
			return this.failures.inspectByFailurePolicy(key, limiter.policy());
		});
	}

	private CompletableFuture<Decision> inspect(String key, RedisLimiter limiter, boolean wait) {
		List<String> client = List.of(RedisKeys.escape(key));
		List<RedisLimiter> limiters = List.of(limiter);
		long sent = this.calls.now();
		return this.calls.carryOver(client, limiters, sent, wait)
			.thenCompose((carried) -> this.calls.decide(client, limiters, sent, true, wait))
			.thenApply((decisions) -> {
				Decision peeked = decisions.get(0);
				// a peek replies as to a refused request: one of one permit would pass when it need not wait
				return new Decision(peeked.retryAfterNanos() == 0, peeked.limit(), peeked.remaining(),
						peeked.retryAfterNanos(), peeked.resetAfterNanos(), 0);
			});
	}

	/**
	 * Deletes the key's states under {@code limiter}'s policy and those it changed from in Redis, forgets the
	 * denials this instance keeps for it, and announces the reset to the fleet.
	 * @throws IllegalStateException if Redis did not delete them
	 */
	void reset(String key, RedisLimiter limiter) {
		try {
			this.calls.reset(RedisKeys.escape(key), limiter);
		}
		catch (ScriptCaller.CallFailure failure) {
			throw new IllegalStateException("Redis did not reset key '" + key + "' under policy '"
					+ limiter.policy().name() + "': " + failure.getCause(), failure.getCause());
		}
		forget(key);
		this.fleet.announceReset(key);
	}

	/** Forgets the denials this instance keeps for {@code key}, so that its next request is decided by Redis. */
	void forget(String key) {
		if (this.denials != null) {
			this.denials.forget(key);
		}
	}

	private static List<KeyedPolicy> keyed(String key, List<RedisLimiter> limiters) {
		List<KeyedPolicy> limits = new ArrayList<>(limiters.size());
		for (RedisLimiter limiter : limiters) {
			limits.add(new KeyedPolicy(key, limiter.policy()));
		}
		return limits;
	}

}
