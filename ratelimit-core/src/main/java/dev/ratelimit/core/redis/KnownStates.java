package dev.ratelimit.core.redis;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.LongFunction;
import java.util.function.LongSupplier;

import org.jspecify.annotations.Nullable;

import dev.ratelimit.core.Decision;
import dev.ratelimit.core.KeyedPolicy;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.internal.FailurePolicyDecisions;

/**
 * What Redis last told this instance of each client key under each policy, so that the failure policy decides
 * from there rather than from a fresh quota: the permits Redis said were left, until the instant Redis said the
 * key would be full again, less what Redis may have granted since without this instance knowing it. Those are
 * the permits this instance admitted without Redis, which Redis never heard of, and the calls of this instance
 * that Redis may have run without its reply arriving: those still under way, and those that failed.
 * <p>
 * Two replies to calls that were under way at the same time may arrive in either order, and the one that arrives
 * last need not be the newer: of such replies the fewest permits left are kept. At most {@link #MAX_KEYS}
 * entries are kept: beyond, the expired ones are dropped, then any, down to three quarters, so that a key dropped
 * is a key not seen.
 */
final class KnownStates {

	/**
	 * How much longer than a call's instant Redis must have said a state holds for the call to expect it: more
	 * than the clocks of Redis and of this instance can drift apart within a window, so that a state Redis let
	 * expire as it said is never taken for one it lost.
	 */
	static final long EXPECT_MARGIN_NANOS = TimeUnit.MILLISECONDS.toNanos(50);

	/**
	 * How long Redis marks a state restored, so that every instance that expects it tells what it last heard:
	 * longer than the calls under way at a loss take to arrive, by default.
	 */
	static final long RESTORED_NANOS = TimeUnit.SECONDS.toNanos(1);

	/** Enough for the clients an instance serves within a window; each entry costs about 200 bytes. */
	static final int MAX_KEYS = 50_000;

	private static final int AFTER_EVICTION = MAX_KEYS * 3 / 4;

	private final ConcurrentHashMap<Entry, Known> known = new ConcurrentHashMap<>();

	/** Whether some key holds permits admitted without Redis that Redis was not told of yet. */
	private final AtomicBoolean owing = new AtomicBoolean();

	private final ReentrantLock eviction = new ReentrantLock();

	private final LongSupplier clock;

	/** @param clock the clock of {@link DecisionCalls#now()}, in which calls are sent */
	KnownStates(LongSupplier clock) {
		this.clock = clock;
	}

	/** The instant in the clock of the calls. */
	long now() {
		return this.clock.getAsLong();
	}

	/** A call about to decide the key under each limiter's policy: until its reply, Redis may take from it. */
	List<Known> sending(String key, List<RedisLimiter> limiters) {
		List<Known> sent = new ArrayList<>(limiters.size());
		for (RedisLimiter limiter : limiters) {
			Known known = tracked(key, limiter.policy());
			known.sending();
			sent.add(known);
		}
		return sent;
	}

	/** A call about to decide each limit, on keys of their own. */
	List<Known> sending(List<KeyedPolicy> limits) {
		List<Known> sent = new ArrayList<>(limits.size());
		for (KeyedPolicy limit : limits) {
			Known known = tracked(limit.key(), limit.policy());
			known.sending();
			sent.add(known);
		}
		return sent;
	}

	/** What is known of the key under the policy, created empty if nothing is. */
	Known tracked(String key, RateLimitPolicy policy) {
		Entry entry = new Entry(key, policy.name());
		Known known = this.known.get(entry);
		if (known == null) {
			if (this.known.size() >= MAX_KEYS) {
				evict();
			}
			known = this.known.computeIfAbsent(entry, (e) -> new Known(key, policy));
		}
		known.policy = policy;
		return known;
	}

	/** This instance admitted requests without Redis, which Redis is to be told of once it answers again. */
	void owe() {
		this.owing.set(true);
	}

	/** Redis was told, or could not be told, of {@code claimed} permits of {@code known}. */
	void settled(Known known, long claimed, boolean told) {
		if (told) {
			known.told(claimed);
		}
		else {
			known.untold(claimed);
			owe();
		}
	}

	/** Whether some key holds permits admitted without Redis that Redis was not told of yet. */
	boolean owing() {
		return this.owing.get();
	}

	/**
	 * The keys whose requests this instance admitted without Redis, at most {@code most} of them, once after
	 * {@link #owe()}, left alone if the last was admitted within {@code quietNanos} of {@code now}: a key left
	 * out, or whose charge fails, is owed again.
	 */
	List<Known> owed(int most, long now, long quietNanos) {
		if (!this.owing.compareAndSet(true, false)) {
			return List.of();
		}
		List<Known> owed = new ArrayList<>();
		for (Known known : this.known.values()) {
			if (known.owed() > 0) {
				if (owed.size() == most || !known.quietSince(now, quietNanos)) {
					owe();
					continue;
				}
				owed.add(known);
			}
		}
		return owed;
	}

	/** Redis answered the call of {@code known}, sent at {@code sent}, with {@code decisions}, one each. */
	void answered(List<Known> known, List<Decision> decisions, long sent) {
		long now = this.clock.getAsLong();
		for (int i = 0; i < known.size(); i++) {
			known.get(i).answered(decisions.get(i), sent, now);
		}
	}

	/** The call of {@code known}, sent at {@code sent}, failed with {@code ex}, a call failure or a bug. */
	static void failed(List<Known> known, long sent, Throwable ex) {
		Throwable cause = (ex.getCause() != null && !(ex instanceof ScriptCaller.CallFailure)) ? ex.getCause() : ex;
		boolean mayHaveRun = !(cause instanceof ScriptCaller.CallFailure failure) || failure.mayHaveRun;
		for (Known state : known) {
			state.failed(sent, mayHaveRun);
		}
	}

	/**
	 * Which of the known states a call sent at {@code now} expects Redis to hold, one character per state, as
	 * the scripts read it: {@code '1'} for those Redis said hold at least {@link #EXPECT_MARGIN_NANOS} longer,
	 * {@code '2'} for those among them this instance restored within {@link #RESTORED_NANOS} twice over, so that
	 * another's restoration does not send it to restore again, {@code '0'} for the others; {@code ""} for none.
	 */
	static String expected(List<Known> known, long now) {
		StringBuilder expect = null;
		for (int i = 0; i < known.size(); i++) {
			char expects = known.get(i).expects(now);
			if (expects != '0') {
				if (expect == null) {
					expect = new StringBuilder("0".repeat(known.size()));
				}
				expect.setCharAt(i, expects);
			}
		}
		return (expect != null) ? expect.toString() : "";
	}

	/** Forgets every key, as when every client was reset: nothing is known, and nothing owed. */
	void clear() {
		this.known.clear();
		this.owing.set(false);
	}

	/** How many keys and policies are known. */
	int size() {
		return this.known.size();
	}

	private void evict() {
		if (!this.eviction.tryLock()) {
			return;
		}
		try {
			long now = this.clock.getAsLong();
			this.known.values().removeIf((known) -> !known.holds(now) && !known.underWay() && known.owed() == 0);
			Iterator<Entry> entries = this.known.keySet().iterator();
			while (this.known.size() > AFTER_EVICTION && entries.hasNext()) {
				entries.next();
				entries.remove();
			}
		}
		finally {
			this.eviction.unlock();
		}
	}

	private record Entry(String key, String policy) {
	}

	/**
	 * What this instance knows of one key under one policy: Redis' last word, {@code remaining} permits left
	 * until {@code until}, and what may have been taken since without Redis saying so.
	 */
	static final class Known {

		final String key;

		/** The policy the key was last decided under. */
		volatile RateLimitPolicy policy;

		/** The permits left as Redis last said, until {@link #until}; none known before a first reply. */
		private long remaining = -1;

		private long until;

		/** When the reply that said so arrived. */
		private long received;

		/** Permits this instance admitted without Redis since Redis last said. */
		private long spent;

		/** Permits admitted without Redis that Redis was not told of yet, the last of them at {@link #lastOwed}. */
		private long owed;

		private long lastOwed;

		private Known(String key, RateLimitPolicy policy) {
			this.key = key;
			this.policy = policy;
		}

		/** The restoration of the key's state after Redis lost it, if any, started at {@link #restoreStarted}. */
		private @Nullable CompletableFuture<?> restoring;

		private long restoreStarted;

		/** Calls under way, which Redis may run before or after it answers. */
		private long underWay;

		/** Calls that failed since Redis last said, sent at {@link #lastFailed} at the latest, Redis may have run. */
		private long failed;

		private long lastFailed;

		synchronized void sending() {
			this.underWay++;
		}

		synchronized boolean underWay() {
			return this.underWay > 0;
		}

		/**
		 * Redis answered a call sent at {@code sent}, received at {@code now}. A reply to a call sent after the
		 * last reply arrived is newer; of replies to calls under way at once, the fewest permits left count.
		 */
		synchronized void answered(Decision decision, long sent, long now) {
			this.underWay--;
			long until = sent + decision.resetAfterNanos();
			boolean holding = holds(now);
			if (!holding) {
				// the key was full again meanwhile: what was admitted without Redis no longer counts
				this.spent = 0;
			}
			if (!holding || sent - this.received > 0) {
				this.remaining = decision.remaining();
				this.until = until;
			}
			else {
				this.remaining = Math.min(this.remaining, decision.remaining());
				this.until = Math.max(this.until, until);
			}
			this.received = now;
			if (sent - this.lastFailed > 0) {
				// a call sent after the failures: its reply counts whatever they took
				this.failed = 0;
			}
		}

		/** A call sent at {@code sent} got no reply: if sent, Redis may have run it, or may run it yet. */
		synchronized void failed(long sent, boolean mayHaveRun) {
			this.underWay--;
			if (mayHaveRun) {
				this.failed++;
				this.lastFailed = Math.max(this.lastFailed, sent);
			}
		}

		synchronized boolean holds(long now) {
			return this.remaining >= 0 && this.until - now > 0;
		}

		/**
		 * This instance's part of what is left, among {@code instances}: its share of what Redis last said,
		 * rounded up, less what it admitted without Redis and the calls Redis may have run unbeknown to it.
		 */
		synchronized long left(int instances) {
			return Math.max(0, FailurePolicyDecisions.ceilDiv(this.remaining, Math.max(1, instances)) - this.spent
					- this.underWay - this.failed);
		}

		/** Takes {@code cost} permits from this instance's part, if they are left. */
		synchronized boolean take(long cost, int instances) {
			if (left(instances) < cost) {
				return false;
			}
			this.spent += cost;
			return true;
		}

		/** Gives back {@code cost} permits taken for a request that was denied after all. */
		synchronized void giveBack(long cost) {
			this.spent -= cost;
		}

		/** A request of {@code cost} permits was admitted without Redis at {@code now}: Redis is to be told. */
		synchronized void admitted(long cost, long now) {
			this.owed += cost;
			this.lastOwed = now;
		}

		/** Permits admitted without Redis that Redis was not told of yet. */
		synchronized long owed() {
			return this.owed;
		}

		/** Whether no request of the key was admitted without Redis within {@code quietNanos} of {@code now}. */
		synchronized boolean quietSince(long now, long quietNanos) {
			return now - this.lastOwed >= quietNanos;
		}

		/**
		 * Takes the permits admitted without Redis that Redis is still to be told of at {@code now}, for one caller
		 * to tell: none once a window of the policy has passed since the last, when no algorithm counts them.
		 */
		synchronized long claim(long now) {
			long owed = (now - this.lastOwed >= this.policy.window().toNanos()) ? 0 : this.owed;
			this.owed = 0;
			return owed;
		}

		/** Redis was told of {@code told} permits admitted without it: its replies count them from now on. */
		synchronized void told(long told) {
			this.spent = Math.max(0, this.spent - told);
		}

		/** Redis could not be told of {@code claimed} permits: they are owed again. */
		synchronized void untold(long claimed) {
			this.owed += claimed;
		}

		/** What a call sent at {@code now} expects of the key's state, as {@link KnownStates#expected} says. */
		synchronized char expects(long now) {
			if (this.remaining < 0 || this.until - now <= EXPECT_MARGIN_NANOS) {
				return '0';
			}
			return (this.restoring != null && now - this.restoreStarted < 2 * RESTORED_NANOS) ? '2' : '1';
		}

		/**
		 * Redis has lost the key's state, which a call sent at {@code sent} expected. The first such call since
		 * Redis last said tells Redis, through {@code restore} started at {@code now}, the permits Redis last said
		 * were left; a call sent before that started waits for it. Until Redis answers again, the key counts as
		 * one Redis told nothing of, and if Redis could not be told, as it was.
		 * @return the restoration, complete once Redis was told, or failed if it could not be
		 */
		CompletableFuture<?> lost(long sent, long now, LongFunction<CompletableFuture<?>> restore) {
			CompletableFuture<Object> restoring;
			long left;
			synchronized (this) {
				if (this.restoring != null && sent - this.restoreStarted < 0) {
					return this.restoring;
				}
				left = this.remaining;
				this.remaining = -1;
				this.restoreStarted = now;
				restoring = new CompletableFuture<>();
				this.restoring = restoring;
			}
			if (left < 0) {
				restoring.complete(null);
			}
			else {
				restore.apply(left).whenComplete((none, ex) -> {
					if (ex != null) {
						// still known, for the failure policy and for the next call, which finds the state lost again
						synchronized (this) {
							if (this.remaining < 0) {
								this.remaining = left;
							}
						}
						restoring.completeExceptionally(ex);
					}
					else {
						restoring.complete(null);
					}
				});
			}
			return restoring;
		}

		/** The restoration of the key's state under way, which a call must wait for before deciding, if any. */
		synchronized @Nullable CompletableFuture<?> restoring() {
			return (this.restoring != null && !this.restoring.isDone()) ? this.restoring : null;
		}

		/** When Redis said the key would be full again. */
		synchronized long until() {
			return this.until;
		}

	}

}
