package dev.ratelimit.core.memory;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import dev.ratelimit.core.Decision;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.RateLimitStore;
import dev.ratelimit.core.RateLimiter;
import dev.ratelimit.core.TimeSource;

/**
 * A {@link RateLimitStore} that keeps every key's state in this JVM.
 * <p>
 * Requests of different keys never contend and there is no global lock. A key under GCRA, the token bucket,
 * the leaky bucket or the fixed window keeps its whole state in one word and a request takes it with one
 * compare-and-set, so no decision holds a hot key while it decides; the sliding window algorithms hold a key's
 * state for the few instructions of a decision. A thread that loses a key to another retries, and after two
 * losses in a row parks for the shortest time the system grants. Time is read from the {@link TimeSource} and
 * counted in microseconds from the store's creation, the unit the Redis store uses too, so both decide alike;
 * fixed windows are aligned to the creation instant.
 * <p>
 * Memory stays bounded. A key whose state has returned to that of a new key (a full bucket, an empty window)
 * is forgotten by a sweep that runs whenever a policy's number of keys has doubled since its last one; forgetting
 * changes no decision. Such a sweep spares the keys used since the sweep before it, so that keys in steady use
 * are not forgotten and created again each time. At most {@link Builder#maxKeys(int) maxKeys} keys are tracked
 * per policy, each policy counting and sweeping its own: when a new key of a policy arrives at the cap, every
 * idle key of that policy is swept (at most once a second), and if the policy is still full the new key shares
 * one overflow quota with every other untracked key of that policy until room frees up. Keys already tracked
 * keep their exact quota and other policies keep their room, so a flood of made-up keys under one policy
 * cannot reset anyone's limit; it can only crowd that policy's newcomers into its shared quota. The store
 * holds at most {@code maxKeys} states per policy it has been asked about.
 */
public final class InMemoryRateLimitStore implements RateLimitStore {

	private final TimeSource timeSource;

	private final long origin;

	final int maxKeys;

	private final ConcurrentHashMap<RateLimitPolicy, PolicyTable> tables = new ConcurrentHashMap<>();

	private final AtomicInteger tableIds = new AtomicInteger();

	private InMemoryRateLimitStore(Builder builder) {
		this.timeSource = builder.timeSource;
		this.origin = builder.timeSource.nanoTime();
		this.maxKeys = builder.maxKeys;
	}

	/**
	 * Returns a builder of in-memory stores.
	 * @return a builder with the system time source and at most 100,000 keys per policy
	 */
	public static Builder builder() {
		return new Builder();
	}

	@Override
	public RateLimiter limiter(RateLimitPolicy policy) {
		return table(policy);
	}

	@Override
	public List<Decision> decideAll(String key, List<RateLimitPolicy> policies) {
		if (policies.size() == 1) {
			return List.of(table(policies.get(0)).decide(key));
		}
		checkDistinct(policies);
		PolicyTable[] tables = new PolicyTable[policies.size()];
		for (int i = 0; i < tables.length; i++) {
			tables[i] = table(policies.get(i));
		}
		Integer[] holdOrder = new Integer[tables.length];
		Arrays.setAll(holdOrder, i -> i);
		Arrays.sort(holdOrder, Comparator.comparingInt(i -> tables[i].id));
		KeyState[] states = new KeyState[tables.length];
		long[] held = new long[tables.length];
		for (;;) {
			for (int i = 0; i < tables.length; i++) {
				states[i] = tables[i].state(key);
			}
			List<Decision> decisions = decideHeld(key, tables, states, held, holdOrder);
			if (decisions != null) {
				return decisions;
			}
		}
	}
	/**
	 * Returns how many keys the store tracks right now, across all policies.
	 * @return the number of keys
	 */
	public int size() {
		int size = 0;
		for (PolicyTable table : this.tables.values()) {
			size += table.size();
		}
		return size;
	}

	/**
	 * Forgets every key that is back to its full quota. The store does this by itself as it grows; calling it
	 * changes no decision.
	 */
	public void forgetIdleKeys() {
		long now = now();
		sweep(now, now);
	}

	/** Forgets, at {@code now}, every key of every policy idle since {@code since}. */
	void sweep(long now, long since) {
		for (PolicyTable table : this.tables.values()) {
			table.sweep(now, since);
		}
	}

	/**
	 * Holds the states one by one in table order, then decides all of them at one instant, read once they are
	 * all held; null if one was retired or had to be rebased, and the states must be looked up again.
	 */
	private List<Decision> decideHeld(String key, PolicyTable[] tables, KeyState[] states, long[] held,
			Integer[] holdOrder) {
		int holding = 0;
		try {
			for (; holding < holdOrder.length; holding++) {
				int i = holdOrder[holding];
				held[i] = states[i].hold();
				if (held[i] == KeyState.RETIRED) {
					return null;
				}
			}
			long now = now();
			for (int i = 0; i < states.length; i++) {
				if (states[i].needsRebase(tables[i].rules, now)) {
					releaseHeld(states, held, holdOrder, holding);
					holding = 0;
					tables[i].rebase(key, states[i]);
					return null;
				}
			}
			// no earlier than any state has seen
			long at = now;
			for (KeyState state : states) {
				at = state.at(at);
			}
			for (KeyState state : states) {
				state.at(at);
			}
			boolean allowed = true;
			for (int i = 0; i < states.length && allowed; i++) {
				allowed = states[i].allows(tables[i].rules, held[i], at);
			}
			List<Decision> decisions = new ArrayList<>(states.length);
			for (int i = 0; i < states.length; i++) {
				if (allowed) {
					held[i] = states[i].take(tables[i].rules, held[i], at);
				}
				decisions.add(states[i].describe(tables[i].rules, held[i], at, allowed));
			}
			return decisions;
		}
		finally {
			releaseHeld(states, held, holdOrder, holding);
		}
	}

	private static void releaseHeld(KeyState[] states, long[] held, Integer[] holdOrder, int holding) {
		for (int k = holding - 1; k >= 0; k--) {
			int i = holdOrder[k];
			states[i].release(held[i]);
		}
	}

	private static void checkDistinct(List<RateLimitPolicy> policies) {
		HashSet<String> names = new HashSet<>();
		for (RateLimitPolicy policy : policies) {
			if (!names.add(policy.name())) {
				throw new IllegalArgumentException("Stacked policies must have distinct names, '" + policy.name()
						+ "' appears twice");
			}
		}
	}

	private PolicyTable table(RateLimitPolicy policy) {
		PolicyTable table = this.tables.get(policy);
		return (table != null) ? table
				: this.tables.computeIfAbsent(Objects.requireNonNull(policy, "policy must not be null"),
						(p) -> new PolicyTable(this, p, this.tableIds.incrementAndGet()));
	}

	long now() {
		return Math.floorDiv(this.timeSource.nanoTime() - this.origin, 1000);
	}

	/**
	 * Builds an {@link InMemoryRateLimitStore}.
	 */
	public static final class Builder {

		private TimeSource timeSource = TimeSource.system();

		private int maxKeys = 100_000;

		private Builder() {
		}

		/**
		 * Sets where the store reads the time.
		 * @param timeSource the time source
		 * @return this builder
		 */
		public Builder timeSource(TimeSource timeSource) {
			this.timeSource = Objects.requireNonNull(timeSource, "timeSource must not be null");
			return this;
		}

		/**
		 * Sets how many keys the store tracks at most under each policy.
		 * @param maxKeys the cap, at least 1
		 * @return this builder
		 */
		public Builder maxKeys(int maxKeys) {
			if (maxKeys < 1) {
				throw new IllegalArgumentException("maxKeys must be at least 1, was " + maxKeys);
			}
			this.maxKeys = maxKeys;
			return this;
		}

		/**
		 * Builds the store. Its clock starts now: fixed windows are aligned to this instant.
		 * @return the store
		 */
		public InMemoryRateLimitStore build() {
			return new InMemoryRateLimitStore(this);
		}

	}

}
