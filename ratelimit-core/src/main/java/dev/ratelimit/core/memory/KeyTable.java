package dev.ratelimit.core.memory;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.Decision;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.RateLimitStore;

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

	/**
	 * The tables of the policies this one changed from, newest first, whose keys carry their permits over while
	 * each lasts.
	 */
	private volatile List<Predecessor> predecessors = List.of();

	KeyTable(InMemoryRateLimitStore store, RateLimitPolicy policy, int id) {
		this.store = store;
		this.rules = new Rules(policy, store.wallOrigin);
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
		List<Predecessor> predecessors = this.predecessors;
		if (!predecessors.isEmpty()) {
			return carriedState(key, predecessors, now);
		}
		KeyState created = this.rules.newState(now);
		KeyState existing = this.states.putIfAbsent(key, created);
		if (existing != null) {
			this.keys.decrementAndGet();
			return existing;
		}
		return created;
	}

	/**
	 * Makes this table the successor of {@code previous}, whose keys are all full again at {@code until}: a key
	 * this table has not seen takes along, once, the permits it has in use in the newest of {@code previous} and
	 * its own live predecessors that holds it, at most
	 * {@link RateLimitStore#MAX_CARRIED_CHANGES} of them.
	 */
	void succeed(KeyTable previous, long until, long now) {
		List<Predecessor> next = new ArrayList<>();
		next.add(new Predecessor(previous, until));
		for (Predecessor older : previous.predecessors) {
			if (next.size() < RateLimitStore.MAX_CARRIED_CHANGES && older.until > now && older.table != this
					&& next.stream().noneMatch((kept) -> kept.table == older.table)) {
				next.add(older);
			}
		}
		this.predecessors = List.copyOf(next);
	}

	/** Creates the state of a key new to this table with the permits it has in use in a predecessor, atomically. */
	private KeyState carriedState(String key, List<Predecessor> predecessors, long now) {
		boolean[] created = new boolean[1];
		KeyState state = this.states.computeIfAbsent(key, (k) -> {
			created[0] = true;
			KeyState fresh = this.rules.newState(now);
			RateLimitPolicy policy = this.rules.policy;
			for (Predecessor predecessor : predecessors) {
				if (now < predecessor.until && predecessor.table.holds(key)) {
					// at most what a fresh key admits in a row, which a request may take at most the capacity of
					long carried = Math.min(predecessor.table.takeOver(key, now), admits(policy));
					while (carried > 0) {
						long taken = Math.min(carried, policy.capacity());
						Rules rules = new Rules(policy.withCost(taken), this.store.wallOrigin);
						fresh.release(fresh.take(rules, fresh.hold(), now));
						carried -= taken;
					}
					break;
				}
			}
			return fresh;
		});
		if (!created[0]) {
			this.keys.decrementAndGet();
		}
		return state;
	}

	private boolean holds(String key) {
		return this.states.containsKey(key);
	}

	/** Removes the state of {@code key} and returns the permits it had in use; 0 when it has none. */
	private long takeOver(String key, long now) {
		for (;;) {
			KeyState state = this.states.get(key);
			if (state == null) {
				return 0;
			}
			long held = state.hold();
			if (held == KeyState.RETIRED) {
				continue;
			}
			if (state.needsRebase(this.rules, now)) {
				state.release(held);
				rebase(key, state);
				continue;
			}
			Decision described = state.describe(this.rules, held, state.at(now), true);
			retire(key, state);
			return inUse(this.rules.policy, described);
		}
	}

	/**
	 * The permits a key that {@code described} describes has in use, which it must get back to be full: its
	 * capacity less what it has left, and for a leaky bucket the request in service too, which its remaining
	 * permits, the free places in its queue, do not count (carry-over.lua counts alike).
	 */
	private static long inUse(RateLimitPolicy policy, Decision described) {
		long queued = policy.capacity() - described.remaining();
		return (policy.algorithm() == Algorithm.LEAKY_BUCKET && described.resetAfterNanos() > 0) ? queued + 1 : queued;
	}

	/** How many requests of one permit a fresh key admits in a row: its capacity, and a leaky bucket one more. */
	private static long admits(RateLimitPolicy policy) {
		return (policy.algorithm() == Algorithm.LEAKY_BUCKET) ? policy.capacity() + 1 : policy.capacity();
	}

	/** Forgets {@code key} here and in every predecessor, so that no change carries its permits back. */
	void reset(String key) {
		remove(key);
		for (Predecessor predecessor : this.predecessors) {
			predecessor.table.remove(key);
		}
	}

	/**
	 * Forgets every key and the overflow state, as a table that has decided nothing; the tables of its
	 * predecessors are cleared by the store as well.
	 */
	void clear() {
		this.states.keySet().forEach(this::remove);
		for (;;) {
			KeyState overflow = this.overflow;
			if (overflow.hold() != KeyState.RETIRED) {
				this.overflow = this.rules.newState(this.store.now());
				overflow.release(KeyState.RETIRED);
				return;
			}
		}
	}

	private void remove(String key) {
		for (;;) {
			KeyState state = this.states.get(key);
			if (state == null) {
				return;
			}
			if (state.hold() != KeyState.RETIRED) {
				retire(key, state);
				return;
			}
		}
	}

	/** Removes the held state of {@code key}; a thread that finds it retired looks the key up again. */
	private void retire(String key, KeyState state) {
		if (this.states.remove(key, state)) {
			this.keys.decrementAndGet();
		}
		state.release(KeyState.RETIRED);
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
		next.blockedUntil = state.blockedUntil;
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
			// a key under a penalty is refused as no new key is, until the penalty ends
			if (state.idleSince(this.rules, held, since) && state.blockedUntil <= since) {
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

	/** The table a policy changed from, and when its last key is full again, in the store's microseconds. */
	private record Predecessor(KeyTable table, long until) {
	}

}
