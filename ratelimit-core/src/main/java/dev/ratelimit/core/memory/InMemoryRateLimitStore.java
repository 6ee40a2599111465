package dev.ratelimit.core.memory;

import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import dev.ratelimit.core.Decision;
import dev.ratelimit.core.KeyedPolicy;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.RateLimitStore;
import dev.ratelimit.core.RateLimiter;
import dev.ratelimit.core.TimeSource;

/**
 * A {@link RateLimitStore} that keeps every key's state in this JVM.
 * <p>
 * Requests of different keys never contend and there is no global lock. A stacked decision holds the states of
 * all its limits at once, in one order (by policy, then by key) that every decision shares, so that stacks on
 * overlapping keys never wait for each other in a cycle. A key under GCRA, the token bucket,
 * the leaky bucket or the fixed window keeps its whole state in one word and a request takes it with one
 * compare-and-set, so no decision holds a hot key while it decides; the sliding window algorithms hold a key's
 * state for the few instructions of a decision. A thread that loses a key to another retries, and after two
 * losses in a row parks for the shortest time the system grants. Time is read from the {@link TimeSource} and
 * counted in microseconds from the store's creation, the unit the Redis store uses too, so both decide alike;
 * fixed windows are aligned to the creation instant, and calendar windows to the time source's
 * {@link TimeSource#instant() instant} then.
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
 * <p>
 * A policy's states are shared by every cost per request and every wait: a key has one quota, whatever each of its
 * requests costs and however long it may wait, and two policies that differ only in those decide over the same
 * states.
 */
public final class InMemoryRateLimitStore implements RateLimitStore {

	private final TimeSource timeSource;

	private final long origin;

	/** The Unix epoch microsecond at which the store's clock reads 0, to which calendar windows are aligned. */
	final long wallOrigin;

	final int maxKeys;

	/** How many costs and waits of a policy, besides its own, keep a table of their own rather than one per request. */
	static final int MAX_COSTS = 64;

	/** The states of each policy, by its {@link RateLimitPolicy#shared() shared} policy. */
	private final ConcurrentHashMap<RateLimitPolicy, KeyTable> keyTables = new ConcurrentHashMap<>();

	/** The tables asked for, by policy and cost, so that a declared cost is looked up without allocating. */
	private final ConcurrentHashMap<RateLimitPolicy, PolicyTable> tables = new ConcurrentHashMap<>();

	private final AtomicInteger tableIds = new AtomicInteger();

	private final InFlightCounts inFlight = new InFlightCounts();

	private InMemoryRateLimitStore(Builder builder) {
		this.timeSource = builder.timeSource;
		this.origin = builder.timeSource.nanoTime();
		this.wallOrigin = ChronoUnit.MICROS.between(Instant.EPOCH, builder.timeSource.instant());
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
	public List<Decision> decideAll(List<KeyedPolicy> limits) {
		RateLimitStore.checkStack(limits);
		if (limits.size() == 1) {
			return List.of(table(limits.get(0).policy()).decide(limits.get(0).key()));
		}
		return whileHeld(stack(limits), InMemoryRateLimitStore::decideHeld);
	}

	/**
	 * Decides at once, on the calling thread, as {@link #decideAll} does, except that a decision that loses a
	 * hot key's word to other threads retries at once instead of parking: the caller's thread never waits.
	 */
	@Override
	public CompletionStage<List<Decision>> decideAllAsync(List<KeyedPolicy> limits) {
		try {
			return CompletableFuture.completedFuture(KeyState.withoutWaiting(() -> decideAll(limits)));
		}
		catch (RuntimeException ex) {
			return CompletableFuture.failedFuture(ex);
		}
	}

	/** Gives back at once, on the calling thread, as {@link #giveBack} does, never parking. */
	@Override
	public CompletionStage<Void> giveBackAsync(List<KeyedPolicy> limits, List<Decision> decisions) {
		try {
			return CompletableFuture.completedFuture(KeyState.withoutWaiting(() -> {
				giveBack(limits, decisions);
				return null;
			}));
		}
		catch (RuntimeException ex) {
			return CompletableFuture.failedFuture(ex);
		}
	}

	@Override
	public void giveBack(List<KeyedPolicy> limits, List<Decision> decisions) {
		RateLimitStore.checkGiveBack(limits, decisions);
		whileHeld(stack(limits), (stack, at) -> {
			for (int i = 0; i < limits.size(); i++) {
				if (stack.first[i] == i && decisions.get(i).taken()) {
					stack.held[i] = stack.states[i].giveBack(stack.tables[i].rules, stack.held[i], at,
							decisions.get(i).takenAt());
				}
			}
			return null;
		});
	}

	/**
	 * {@inheritDoc}
	 * <p>
	 * Counts the requests in flight of each name and key in this JVM, for as long as any is.
	 */
	@Override
	public Optional<InFlight> inFlight() {
		return Optional.of(this.inFlight);
	}

	@Override
	public Decision inspect(String key, RateLimitPolicy policy) {
		Objects.requireNonNull(key, "key must not be null");
		HeldStates held = new HeldStates(new PolicyTable[] { table(policy.shared()) }, new String[] { key });
		return whileHeld(held, (stack, at) -> {
			Rules rules = stack.tables[0].rules;
			KeyState state = stack.states[0];
			boolean allowed = state.allows(rules, stack.held[0], at);
			Decision decision = describe(stack, 0, at, allowed);
			return new Decision(decision.allowed(), decision.limit(), decision.remaining(),
					decision.retryAfterNanos(), decision.resetAfterNanos(), 0);
		});
	}

	/**
	 * Forgets {@code key} under the policy, and under the policies it changed from while their keys still carry
	 * over. A key beyond the cap, which shares the policy's overflow quota, keeps sharing it.
	 */
	@Override
	public void reset(String key, RateLimitPolicy policy) {
		Objects.requireNonNull(key, "key must not be null");
		KeyTable keys = this.keyTables.get(policy.shared());
		if (keys != null) {
			keys.reset(key);
		}
	}

	/**
	 * {@inheritDoc}
	 * <p>
	 * Forgets every key of every policy, and the overflow quota that the keys beyond the cap share.
	 */
	@Override
	public Optional<ResetAll> resetAll() {
		return Optional.of(() -> this.keyTables.values().forEach(KeyTable::clear));
	}

	/**
	 * {@inheritDoc}
	 * <p>
	 * The states of {@code from} are kept for a change back within that time, like Redis keeps a key until it
	 * expires: a key that {@code to} already holds from an earlier visit keeps that state.
	 */
	@Override
	public void change(RateLimitPolicy from, RateLimitPolicy to) {
		if (!RateLimitStore.checkChange(from, to)) {
			return;
		}
		long now = now();
		KeyTable old = this.keyTables.computeIfAbsent(from.shared(), this::newKeyTable);
		this.keyTables.computeIfAbsent(to.shared(), this::newKeyTable)
			.succeed(old, now + micros(from.fullAfter()), now);
	}

	private KeyTable newKeyTable(RateLimitPolicy policy) {
		return new KeyTable(this, policy, this.tableIds.incrementAndGet());
	}

	private static long micros(Duration duration) {
		return TimeUnit.NANOSECONDS.toMicros(duration.toNanos());
	}

	/** Holds every state of {@code stack}, looked up again while one was retired, and works on them at one instant. */
	private <T> T whileHeld(HeldStates stack, HeldWork<T> work) {
		for (;;) {
			long at = stack.hold(this);
			if (at == KeyState.RETIRED) {
				continue;
			}
			try {
				return work.run(stack, at);
			}
			finally {
				stack.release();
			}
		}
	}

	/** What is done on held states at the instant they were held at. */
	@FunctionalInterface
	private interface HeldWork<T> {

		T run(HeldStates stack, long at);

	}

	/**
	 * Returns how many keys the store tracks right now, across all policies.
	 * @return the number of keys
	 */
	public int size() {
		int size = 0;
		for (KeyTable table : this.keyTables.values()) {
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
		for (KeyTable table : this.keyTables.values()) {
			table.sweep(now, since);
		}
	}

	private HeldStates stack(List<KeyedPolicy> limits) {
		PolicyTable[] tables = new PolicyTable[limits.size()];
		String[] keys = new String[limits.size()];
		for (int i = 0; i < tables.length; i++) {
			tables[i] = table(limits.get(i).policy());
			keys[i] = limits.get(i).key();
		}
		return new HeldStates(tables, keys);
	}

	/** Decides one request of {@code key} on the held state of {@code table}. */
	Decision decideHeld(PolicyTable table, String key) {
		return whileHeld(new HeldStates(new PolicyTable[] { table }, new String[] { key }),
				InMemoryRateLimitStore::decideHeld).get(0);
	}

	/**
	 * Decides all the held states at one instant: all allowed and taken, or all denied. A policy with a penalty
	 * refuses a key it refused less than the penalty ago, and starts the penalty when it refuses the key itself.
	 */
	private static List<Decision> decideHeld(HeldStates stack, long at) {
		int size = stack.states.length;
		boolean allowed = true;
		for (int i = 0; i < size; i++) {
			Rules rules = stack.tables[i].rules;
			KeyState state = stack.states[i];
			if (stack.first[i] != i || !(allowed || rules.penalty > 0)) {
				continue;
			}
			if (rules.penalty > 0 && state.blockedUntil - at > 0) {
				allowed = false;
			}
			else if (!state.allows(rules, stack.held[i], at)) {
				allowed = false;
				if (rules.penalty > 0) {
					state.blockedUntil = at + rules.penalty;
				}
			}
		}
		if (allowed) {
			for (int i = 0; i < size; i++) {
				if (stack.first[i] == i) {
					stack.held[i] = stack.states[i].take(stack.tables[i].rules, stack.held[i], at);
				}
			}
		}
		List<Decision> decisions = new ArrayList<>(size);
		for (int i = 0; i < size; i++) {
			decisions.add(describe(stack, i, at, allowed));
		}
		return decisions;
	}

	/** Describes the {@code i}-th held state of the stack: a key under a penalty as refused until it ends. */
	private static Decision describe(HeldStates stack, int i, long at, boolean allowed) {
		Rules rules = stack.tables[i].rules;
		KeyState state = stack.states[i];
		Decision decision = state.describe(rules, stack.held[stack.first[i]], at, allowed);
		long blocked = state.blockedUntil - at;
		if (rules.penalty == 0 || blocked <= 0) {
			return decision;
		}
		long retryAfter = rules.microsToNanos(blocked);
		return new Decision(false, decision.limit(), 0, retryAfter, Math.max(retryAfter, decision.resetAfterNanos()),
				0, Decision.NOT_TAKEN);
	}

	/**
	 * Returns the table of {@code policy} at its cost and wait, over the states that every cost and wait of the
	 * policy shares. The first {@link #MAX_COSTS} of a policy are kept; a request of any further cost or wait gets
	 * a table of its own, so that costs and waits computed per request cannot grow the store.
	 */
	PolicyTable table(RateLimitPolicy policy) {
		PolicyTable table = this.tables.get(policy);
		if (table != null) {
			return table;
		}
		Objects.requireNonNull(policy, "policy must not be null");
		KeyTable keys = this.keyTables.computeIfAbsent(policy.shared(), this::newKeyTable);
		if (!policy.equals(keys.rules.policy)
				&& keys.costs.getAndUpdate((n) -> Math.min(n + 1, MAX_COSTS)) == MAX_COSTS) {
			return new PolicyTable(keys, policy);
		}
		return this.tables.computeIfAbsent(policy, (p) -> new PolicyTable(keys, p));
	}

	TimeSource timeSource() {
		return this.timeSource;
	}

	/**
	 * How long from now until an allowed request may go ahead: its delay counted from the instant it was decided
	 * at, so that a wait that starts late does not end late.
	 */
	long untilDue(Decision decision) {
		if (decision.delayNanos() == 0) {
			return 0;
		}
		return this.origin + decision.takenAt() * 1000 + decision.delayNanos() - this.timeSource.nanoTime();
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
