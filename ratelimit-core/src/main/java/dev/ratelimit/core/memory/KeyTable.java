package dev.ratelimit.core.memory;

import java.util.Iterator;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import dev.ratelimit.core.RateLimitPolicy;

/**
 * The states of every key under one policy, whatever the cost of each request, at most the store's cap of them:
 * keys beyond it share one overflow state. Each table counts and sweeps its own keys, so a flood of keys under
 * one policy leaves every other policy's keys and room as they were.
 */
final class KeyTable {

	private static final int MIN_SWEEP_SIZE = 1024;

	private static final long MIN_SWEEP_INTERVAL_MICROS = 1_000_000;

	/** The rules of the policy at its least cost: those that every cost shares, to rebase and forget states. */
	final Rules rules;

	/** Orders tables so that stacked decisions always hold states in the same order. */
	final int id;

	final InMemoryRateLimitStore store;

	private final ConcurrentHashMap<String, KeyState> states = new ConcurrentHashMap<>();

	private volatile KeyState overflow;

	private final AtomicInteger keys = new AtomicInteger();

	private final AtomicBoolean sweeping = new AtomicBoolean();

	private volatile int nextSweepAt;

	/** When the last sweep ran; the table's creation before the first. */
	private volatile long lastSweep;

	/** How many tables of other costs the store keeps for this one, at most {@link InMemoryRateLimitStore#MAX_COSTS}. */
	final AtomicInteger costs = new AtomicInteger();

	KeyTable(InMemoryRateLimitStore store, RateLimitPolicy policy, int id) {
		this.store = store;
		this.rules = new Rules(policy);
		this.id = id;
		long now = store.now();
		this.overflow = this.rules.newState(now);
		this.lastSweep = now;
		this.nextSweepAt = Math.min(MIN_SWEEP_SIZE, store.maxKeys);
	}

	/** Returns the state of {@code key}, created if needed, or the shared overflow state at the cap. */
	KeyState state(String key) {
		KeyState state = this.states.get(key);
		if (state != null) {
			return state;
		}
		long now = this.store.now();
		if (!reserveKey(now)) {
			return this.overflow;
		}
		KeyState created = this.rules.newState(now);
		KeyState existing = this.states.putIfAbsent(key, created);
		if (existing != null) {
			this.keys.decrementAndGet();
			return existing;
		}
		return created;
	}

	/** Counts one more key, sweeping first when the table has grown; false when the table is full. */
	private boolean reserveKey(long now) {
		int count = this.keys.get();
		if (count >= this.nextSweepAt) {
			if (count < this.store.maxKeys) {
				// a key used since the last sweep is likely to be used again: keep it one more round
				sweep(now, Math.min(this.lastSweep, now));
			}
			else if (now - this.lastSweep >= MIN_SWEEP_INTERVAL_MICROS) {
				sweep(now, now);
			}
		}
		for (;;) {
			count = this.keys.get();
			if (count >= this.store.maxKeys) {
				return false;
			}
			if (this.keys.compareAndSet(count, count + 1)) {
				return true;
			}
		}
	}

	/**
	 * Replaces the state of {@code key} by an equivalent one that counts from now, if it can no longer count
	 * the current instant; does nothing if it was retired meanwhile.
	 */
	void rebase(String key, KeyState state) {
		long held = state.hold();
		if (held == KeyState.RETIRED) {
			return;
		}
		long now = this.store.now();
		if (!state.needsRebase(this.rules, now)) {
			state.release(held);
			return;
		}
		KeyState next = ((PackedState) state).rebased(this.rules, held, now);
		if (state == this.overflow) {
			this.overflow = next;
		}
		else {
			this.states.replace(key, state, next);
		}
		state.release(KeyState.RETIRED);
	}

	/**
	 * Forgets, at {@code now}, every key whose state has been back to that of a new key since {@code since};
	 * at most one sweep runs at a time, and one that finds another running does nothing.
	 */
	void sweep(long now, long since) {
		if (!this.sweeping.compareAndSet(false, true)) {
			return;
		}
		try {
			this.lastSweep = now;
			this.keys.addAndGet(-forget(since));
			long next = Math.max(MIN_SWEEP_SIZE, 2L * this.keys.get());
			this.nextSweepAt = (int) Math.min(next, this.store.maxKeys);
		}
		finally {
			this.sweeping.set(false);
		}
	}

	private int forget(long since) {
		int forgotten = 0;
		for (Iterator<Map.Entry<String, KeyState>> entries = this.states.entrySet().iterator(); entries.hasNext();) {
			Map.Entry<String, KeyState> entry = entries.next();
			KeyState state = entry.getValue();
			long held = state.hold();
			if (held == KeyState.RETIRED) {
				continue;
			}
			if (state.idleSince(this.rules, held, since)) {
				this.states.remove(entry.getKey(), state);
				state.release(KeyState.RETIRED);
				forgotten++;
			}
			else {
				state.release(held);
			}
		}
		return forgotten;
	}

	int size() {
		return this.states.size();
	}

}
