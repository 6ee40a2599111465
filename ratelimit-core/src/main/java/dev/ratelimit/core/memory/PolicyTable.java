package dev.ratelimit.core.memory;

import java.util.Iterator;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import dev.ratelimit.core.Decision;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.RateLimiter;

/**
 * The states of every key under one policy. Keys beyond the store's cap share one overflow state.
 */
final class PolicyTable implements RateLimiter {

	final Rules rules;

	/** Orders tables so that stacked decisions always hold states in the same order. */
	final int id;

	private final InMemoryRateLimitStore store;

	private final ConcurrentHashMap<String, KeyState> states = new ConcurrentHashMap<>();

	private volatile KeyState overflow;

	PolicyTable(InMemoryRateLimitStore store, RateLimitPolicy policy, int id) {
		this.store = store;
		this.rules = new Rules(policy);
		this.id = id;
		this.overflow = this.rules.newState(store.now());
	}

	@Override
	public RateLimitPolicy policy() {
		return this.rules.policy;
	}

	@Override
	public Decision decide(String key) {
		for (;;) {
			KeyState state = state(key);
			Decision decision = state.decide(this.rules, this.store);
			if (decision != null) {
				return decision;
			}
			rebase(key, state);
		}
	}

	@Override
	public boolean tryAcquire(String key) {
		for (;;) {
			KeyState state = state(key);
			int result = state.tryAcquire(this.rules, this.store);
			if (result != KeyState.AGAIN) {
				return result == KeyState.ALLOWED;
			}
			rebase(key, state);
		}
	}

	/** Returns the state of {@code key}, created if needed, or the shared overflow state at the cap. */
	KeyState state(String key) {
		KeyState state = this.states.get(key);
		if (state != null) {
			return state;
		}
		long now = this.store.now();
		if (!this.store.reserveKey(now)) {
			return this.overflow;
		}
		KeyState created = this.rules.newState(now);
		KeyState existing = this.states.putIfAbsent(key, created);
		if (existing != null) {
			this.store.releaseKeys(1);
			return existing;
		}
		return created;
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
	 * Forgets every key whose state has been back to that of a new key since {@code since}, and returns how
	 * many it forgot.
	 */
	int sweep(long since) {
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
