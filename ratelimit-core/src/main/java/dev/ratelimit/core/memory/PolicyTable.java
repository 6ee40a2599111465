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

	/** Orders tables so that stacked decisions always lock states in the same order. */
	final int id;

	private final InMemoryRateLimitStore store;

	private final ConcurrentHashMap<String, KeyState> states = new ConcurrentHashMap<>();

	private final KeyState overflow;

	PolicyTable(InMemoryRateLimitStore store, RateLimitPolicy policy, int id) {
		this.store = store;
		this.rules = new Rules(policy);
		this.id = id;
		this.overflow = this.rules.newState();
	}

	@Override
	public RateLimitPolicy policy() {
		return this.rules.policy;
	}

	@Override
	public Decision decide(String key) {
		long now = this.store.now();
		for (;;) {
			KeyState state = state(key, now);
			synchronized (state) {
				if (!state.retired) {
					long at = state.at(now);
					boolean allowed = state.acquire(this.rules, at, true);
					return state.describe(this.rules, at, allowed);
				}
			}
		}
	}

	@Override
	public boolean tryAcquire(String key) {
		long now = this.store.now();
		for (;;) {
			KeyState state = state(key, now);
			synchronized (state) {
				if (!state.retired) {
					return state.acquire(this.rules, state.at(now), true);
				}
			}
		}
	}

	/** Returns the state of {@code key}, created if needed, or the shared overflow state at the cap. */
	KeyState state(String key, long now) {
		KeyState state = this.states.get(key);
		if (state != null) {
			return state;
		}
		if (!this.store.reserveKey(now)) {
			return this.overflow;
		}
		KeyState created = this.rules.newState();
		KeyState existing = this.states.putIfAbsent(key, created);
		if (existing != null) {
			this.store.releaseKeys(1);
			return existing;
		}
		return created;
	}

	/** Forgets every key whose state is back to that of a new key, and returns how many it forgot. */
	int sweep(long now) {
		int forgotten = 0;
		for (Iterator<Map.Entry<String, KeyState>> entries = this.states.entrySet().iterator(); entries.hasNext();) {
			KeyState state = entries.next().getValue();
			synchronized (state) {
				if (state.isIdle(this.rules, state.at(now))) {
					state.retired = true;
					entries.remove();
					forgotten++;
				}
			}
		}
		return forgotten;
	}

	int size() {
		return this.states.size();
	}

}
