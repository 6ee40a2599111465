package dev.ratelimit.core.redis;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;

import org.jspecify.annotations.Nullable;

import dev.ratelimit.core.Decision;
import dev.ratelimit.core.RateLimitPolicy;

/**
 * Redis' own recent denials, so that this instance denies the same request again without a call while Redis'
 * reply cannot have changed: a denied request takes nothing, and no other request of the same policies can
 * take from a key that denies it, so Redis would answer the same, with its times shorter by the time elapsed
 * since the call was sent.
 * <p>
 * A reply is kept only if every policy in it denied a request of one permit by itself, with no permit left:
 * until the retry-after, when one permit is back, no request of any cost can take from the key, so its state
 * stays the same. A request of a larger cost is always asked of Redis, since requests of smaller costs may take
 * the permits it leaves, and so is a request that may wait, which reserves permits beyond what is left: such a
 * reservation pushes a key's refusals on, and the denials kept for the key are forgotten. One made by another
 * instance leaves this one's denials telling too short a retry-after until they expire, never a wrong decision.
 * It is kept until the shortest retry-after of its policies. At most {@link #MAX_KEYS} client keys hold
 * denials: beyond, the expired ones are dropped, then those that expire soonest.
 */
final class LocalDenials {

	/** Enough for every client hammering an instance at once; each key costs about 200 bytes. */
	static final int MAX_KEYS = 10_000;

	/** What one eviction leaves, so that the sort it may need is paid once per quarter of the capacity. */
	private static final int AFTER_EVICTION = MAX_KEYS * 3 / 4;

	private final ConcurrentHashMap<String, Denial> byKey = new ConcurrentHashMap<>();

	private final AtomicLong forgets = new AtomicLong();

	private final ReentrantLock eviction = new ReentrantLock();

	/**
	 * Returns how many times a key was forgotten so far: a reply to a call sent before a key was forgotten
	 * must not be kept.
	 */
	long epoch() {
		return this.forgets.get();
	}

	/** The decisions Redis would answer at {@code now} to the request, or {@code null} when none is kept. */
	@Nullable List<Decision> find(String key, List<RedisLimiter> limiters, long now) {
		for (Denial denial = this.byKey.get(key); denial != null; denial = denial.next) {
			if (denial.limiters.equals(limiters)) {
				long elapsed = now - denial.sent;
				return (elapsed >= 0 && elapsed < denial.validNanos) ? denial.after(elapsed) : null;
			}
		}
		return null;
	}

	/**
	 * Keeps Redis' reply to a call sent at {@code sent} (in the clock of {@link DecisionCalls#now()}), if it
	 * denies for a while and no key was forgotten since {@code epoch}.
	 */
	void keep(String key, List<RedisLimiter> limiters, List<Decision> decisions, long sent, long epoch, long now) {
		long valid = validNanos(limiters, decisions);
		if (valid == 0) {
			return;
		}
		if (this.byKey.size() >= MAX_KEYS) {
			evict(now);
		}
		// copied: the caller receives the same decisions and may change the list
		List<Decision> reply = List.copyOf(decisions);
		this.byKey.compute(key, (k, kept) -> (this.forgets.get() != epoch) ? kept
				: new Denial(limiters, reply, sent, valid, others(kept, limiters, now)));
	}

	/** Drops every denial kept for {@code key}. */
	void forget(String key) {
		// before the removal, so that a reply already on its way sees it and is not kept
		this.forgets.incrementAndGet();
		this.byKey.remove(key);
	}

	/** Drops every denial kept, as when a client may have been reset elsewhere. */
	void forgetAll() {
		this.forgets.incrementAndGet();
		this.byKey.clear();
	}

	int keys() {
		return this.byKey.size();
	}

	/** How long the reply holds, or 0 if it may change before its retry-after. */
	private static long validNanos(List<RedisLimiter> limiters, List<Decision> decisions) {
		long valid = Long.MAX_VALUE;
		for (int i = 0; i < decisions.size(); i++) {
			Decision decision = decisions.get(i);
			RateLimitPolicy policy = limiters.get(i).policy();
			if (decision.allowed() || decision.retryAfterNanos() <= 0 || policy.cost() != 1
					|| !policy.maxWait().isZero() || decision.remaining() != 0) {
				return 0;
			}
			valid = Math.min(valid, decision.retryAfterNanos());
		}
		return valid;
	}

	/** The denials of the other policies of a key that still hold. */
	private static @Nullable Denial others(@Nullable Denial kept, List<RedisLimiter> limiters, long now) {
		Denial others = null;
		for (Denial denial = kept; denial != null; denial = denial.next) {
			if (!denial.limiters.equals(limiters) && denial.holdsAt(now)) {
				others = new Denial(denial.limiters, denial.decisions, denial.sent, denial.validNanos, others);
			}
		}
		return others;
	}

	private void evict(long now) {
		if (!this.eviction.tryLock()) {
			// another thread is making room
			return;
		}
		try {
			this.byKey.values().removeIf((denial) -> !denial.anyHoldsAt(now));
			int excess = this.byKey.size() - AFTER_EVICTION;
			if (excess <= 0) {
				return;
			}
			List<Map.Entry<String, Denial>> entries = new ArrayList<>(this.byKey.entrySet());
			entries.sort((a, b) -> Long.compare(a.getValue().lastExpiry(), b.getValue().lastExpiry()));
			for (int i = 0; i < excess && i < entries.size(); i++) {
				this.byKey.remove(entries.get(i).getKey(), entries.get(i).getValue());
			}
		}
		finally {
			this.eviction.unlock();
		}
	}

	/** One reply of Redis, and the other denials kept for the same client key. */
	private record Denial(List<RedisLimiter> limiters, List<Decision> decisions, long sent, long validNanos,
			@Nullable Denial next) {

		boolean holdsAt(long now) {
			return now - this.sent >= 0 && now - this.sent < this.validNanos;
		}

		boolean anyHoldsAt(long now) {
			for (Denial denial = this; denial != null; denial = denial.next) {
				if (denial.holdsAt(now)) {
					return true;
				}
			}
			return false;
		}

		long lastExpiry() {
			long last = Long.MIN_VALUE;
			for (Denial denial = this; denial != null; denial = denial.next) {
				last = Math.max(last, denial.sent + denial.validNanos);
			}
			return last;
		}

		/** The reply Redis would give {@code elapsed} nanoseconds after this one, which is less than valid. */
		List<Decision> after(long elapsed) {
			if (this.decisions.size() == 1) {
				return List.of(shift(this.decisions.get(0), elapsed));
			}
			Decision[] shifted = new Decision[this.decisions.size()];
			for (int i = 0; i < shifted.length; i++) {
				shifted[i] = shift(this.decisions.get(i), elapsed);
			}
			return List.of(shifted);
		}

		private static Decision shift(Decision decision, long elapsed) {
			return new Decision(false, decision.limit(), decision.remaining(), decision.retryAfterNanos() - elapsed,
					Math.max(0, decision.resetAfterNanos() - elapsed), 0);
		}

	}

}
