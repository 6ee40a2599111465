package dev.ratelimit.core.jdbc;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import javax.sql.DataSource;

import org.jspecify.annotations.Nullable;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.Decision;
import dev.ratelimit.core.FailurePolicy;
import dev.ratelimit.core.KeyedPolicy;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.RateLimitStore;
import dev.ratelimit.core.RateLimiter;
import dev.ratelimit.core.TimeSource;
import dev.ratelimit.core.internal.Durations;
import dev.ratelimit.core.internal.FailureLog;
import dev.ratelimit.core.internal.FailurePolicyDecisions;
import dev.ratelimit.core.internal.OutageDetector;
import dev.ratelimit.core.internal.PolicyLimiters;

/**
 * A {@link RateLimitStore} that keeps every key's state in a PostgreSQL table, shared by every instance that uses
 * the same database, table and key prefix.
 * <p>
 * Each decision is one call of a PL/pgSQL function, one prepared statement on a connection of the
 * {@link DataSource} in autocommit: one round trip and one transaction, for one policy or for
 * {@link #decideAll stacked limits} on any keys, all or nothing. The function locks the row of each limit
 * ({@code SELECT ... FOR UPDATE}, creating a missing one with {@code INSERT ... ON CONFLICT DO NOTHING}), in the
 * order of key then policy, so that stacks over the same keys never deadlock, then decides under those locks and
 * writes the rows back. It is therefore correct under {@code READ COMMITTED}, PostgreSQL's default, which the data source's
 * connections must keep: under {@code REPEATABLE READ} or {@code SERIALIZABLE} a statement reads the rows as they
 * were before the locks it waited for, so a call on such a connection fails with an {@link IllegalStateException}
 * saying so, whatever the failure policy. The functions make the same decisions as the
 * {@link dev.ratelimit.core.memory.InMemoryRateLimitStore in-memory store} and the Redis scripts, with the same
 * integer arithmetic; times in decisions are whole nanoseconds.
 * <p>
 * Time comes from the database's {@code clock_timestamp()}, read once the rows are locked, so that instances with
 * skewed clocks agree, unless a {@link Builder#timeSource(TimeSource) time source} is set. Each row carries the
 * instant at which its key is back to a full quota; {@link #deleteExpired(int)} deletes such rows, and never one
 * that a decision holds, which changes no decision: call it now and then, from a scheduler of the application's.
 * <p>
 * The store creates its table, the table's index and its functions on {@link Builder#build()} where they are
 * missing, from {@code META-INF/ratelimit/sql/schema.sql} in this jar, whose only placeholder is
 * {@code ${table}}; with {@link Builder#createSchema(boolean) createSchema(false)} it leaves that to the
 * application's migrations, which can copy that file.
 * <p>
 * A call that the database has not answered within the {@link Builder#timeout(Duration) timeout}, counted from
 * asking the data source for a connection, or that fails, is decided by the
 * {@link Builder#failurePolicy(FailurePolicy) failure policy}, and its statement cancelled; the store reports its
 * outages through {@link #failures()}. Under {@link FailurePolicy#LOCAL} each instance admits its share of each
 * limit, {@code ceil(limit / n)} for the {@code n} instances that its heartbeat, about once a second in the
 * table's {@code _fleet} table, counts ({@link #fleet()}); {@link #close()} stops the heartbeat. The store
 * {@link #sharedChanges() shares} the runtime changes of policies with its fleet in the table's {@code _changes} table;
 * {@link #change a change} carries each key's permits over in the decision's own call. JDBC blocks, so {@link
 * #decideAllAsync}, {@link #giveBackAsync} and {@link #inspectAsync} decide on the calling thread, as the port's
 * defaults do, unless the builder names an {@link Builder#executor(Executor) executor}: then they return at once and
 * the executor's thread waits for the database, as a reactive server's event loop must never do.
 */
public final class JdbcRateLimitStore implements RateLimitStore, AutoCloseable {

	/** The table of the states, unless the builder names another. */
	public static final String DEFAULT_TABLE_NAME = "ratelimit_state";

	private static final System.Logger logger = System.getLogger(JdbcRateLimitStore.class.getName());

	private final BoundedCalls bounded;

	private final StateCalls calls;

	private final PolicyLimiters<JdbcLimiter> changes;

	private final DatabaseFailures failures;

	private final DatabaseFleet fleet;

	private final FleetChanges sharedChanges;

	private final DatabaseLeases inFlight;

	private final @Nullable Executor executor;

	private JdbcRateLimitStore(Builder builder) {
		if (builder.createSchema) {
			StateSchema.create(builder.dataSource, builder.tableName);
		}
		TimeSource ticker = TimeSource.system();
		this.bounded = new BoundedCalls(builder.dataSource, builder.timeout, ticker);
		this.calls = new StateCalls(this.bounded, builder.tableName, builder.keyPrefix, builder.timeSource);
		this.changes = new PolicyLimiters<>((policy, stateName, predecessors) -> new JdbcLimiter(this.calls,
				this::decide, policy, stateName, predecessors), (limiter) -> limiter.stateName, this.calls::nowNanos);
		ScheduledExecutorService scheduler = DatabaseFleet.newScheduler();
		// lines are written off the request threads: a cold logger can take longer than the timeout
		this.failures = new DatabaseFailures(new OutageDetector<>(builder.timeout.toNanos(), ticker),
				builder.failurePolicy, FailurePolicyDecisions.local(null, builder.timeSource), this::fleetSize,
				new FailureLog(logger, "PostgreSQL", builder.failurePolicy, ticker, scheduler));
		builder.listeners.forEach(this.failures::addListener);
		this.sharedChanges = new FleetChanges(this.bounded, this.failures, builder.dataSource, builder.tableName,
				builder.keyPrefix);
		this.fleet = new DatabaseFleet(this.calls, this.failures, this.sharedChanges, scheduler);
		this.inFlight = new DatabaseLeases(this.bounded, this.calls, this.failures,
				(builder.executor != null) ? builder.executor : this.bounded.workers(), scheduler, builder.tableName,
				builder.keyPrefix, TimeUnit.NANOSECONDS.toMicros(builder.inFlightLease.toNanos()));
		this.executor = builder.executor;
	}

	/**
	 * Returns a builder of a store over {@code dataSource}, a PostgreSQL database.
	 * @param dataSource where the connections come from, best a pool's
	 * @return the builder
	 */
	public static Builder builder(DataSource dataSource) {
		return new Builder(dataSource);
	}

	@Override
	public RateLimiter limiter(RateLimitPolicy policy) {
		return this.changes.limiter(policy);
	}

	private Decision decide(String key, JdbcLimiter limiter) {
		List<KeyedPolicy> limits = List.of(new KeyedPolicy(key, limiter.policy()));
		return this.failures.decide(limits, () -> this.calls.decide(List.of(key), List.of(limiter), false)).get(0);
	}

	private int fleetSize() {
		return this.fleet.size();
	}

	/**
	 * {@inheritDoc}
	 * <p>
	 * Decided by the {@link Builder#failurePolicy(FailurePolicy) failure policy} when the database does not
	 * decide within the {@link Builder#timeout(Duration) timeout}, or is known to be failing.
	 */
	@Override
	public List<Decision> decideAll(List<KeyedPolicy> limits) {
		RateLimitStore.checkStack(limits);
		List<JdbcLimiter> limiters = this.changes.limiters(limits);
		return this.failures.decide(limits, () -> this.calls.decide(keys(limits), limiters, false));
	}

	/**
	 * {@inheritDoc}
	 * <p>
	 * Decides on the {@link Builder#executor(Executor) executor} when there is one; a stage fails with a
	 * {@link RejectedExecutionException} when the executor refuses the call.
	 */
	@Override
	public CompletionStage<List<Decision>> decideAllAsync(List<KeyedPolicy> limits) {
		return (this.executor != null) ? offThread(() -> decideAll(limits), this.executor)
				: RateLimitStore.super.decideAllAsync(limits);
	}

	/**
	 * {@inheritDoc}
	 * <p>
	 * Permits that the database does not take back within the timeout, or while it is failing, stay taken; the
	 * {@link Failures#addListener failure listeners} are told.
	 */
	@Override
	public void giveBack(List<KeyedPolicy> limits, List<Decision> decisions) {
		RateLimitStore.checkGiveBack(limits, decisions);
		List<JdbcLimiter> limiters = this.changes.limiters(limits);
		if (decisions.stream().noneMatch(Decision::taken)) {
			return;
		}
		this.failures.giveBack(limits, () -> {
			this.calls.giveBack(keys(limits), limiters, decisions);
			return null;
		});
	}

	/**
	 * {@inheritDoc}
	 * <p>
	 * Gives back on the {@link Builder#executor(Executor) executor} when there is one.
	 */
	@Override
	public CompletionStage<Void> giveBackAsync(List<KeyedPolicy> limits, List<Decision> decisions) {
		return (this.executor != null) ? offThread(() -> {
			giveBack(limits, decisions);
			return null;
		}, this.executor) : RateLimitStore.super.giveBackAsync(limits, decisions);
	}

	@Override
	public Decision inspect(String key, RateLimitPolicy policy) {
		Objects.requireNonNull(key, "key must not be null");
		JdbcLimiter limiter = this.changes.limiter(policy.shared());
		return this.failures.inspect(key, policy, () -> {
			Decision peeked = this.calls.decide(List.of(key), List.of(limiter), true).get(0);
			// a peek replies as to a refused request: one of one permit would pass when it need not wait
			return new Decision(peeked.retryAfterNanos() == 0, peeked.limit(), peeked.remaining(),
					peeked.retryAfterNanos(), peeked.resetAfterNanos(), 0);
		});
	}

	/**
	 * {@inheritDoc}
	 * <p>
	 * Inspects on the {@link Builder#executor(Executor) executor} when there is one.
	 */
	@Override
	public CompletionStage<Decision> inspectAsync(String key, RateLimitPolicy policy) {
		return (this.executor != null) ? offThread(() -> inspect(key, policy), this.executor)
				: RateLimitStore.super.inspectAsync(key, policy);
	}

	/**
	 * {@inheritDoc}
	 * <p>
	 * Deletes the key's rows under the policy and under the policies it changed from.
	 * @throws IllegalStateException if the database did not delete them
	 */
	@Override
	public void reset(String key, RateLimitPolicy policy) {
		Objects.requireNonNull(key, "key must not be null");
		this.calls.reset(key, this.changes.limiter(policy.shared()));
	}

	@Override
	public void change(RateLimitPolicy from, RateLimitPolicy to) {
		this.changes.change(from, to);
	}

	/**
	 * {@inheritDoc}
	 * <p>
	 * Deletes every row of the store's key prefix, in one statement.
	 */
	@Override
	public Optional<ResetAll> resetAll() {
		return Optional.of(this.calls::resetAll);
	}

	/**
	 * Deletes up to {@code max} rows of the store's key prefix whose keys are back to their full quota, skipping
	 * the rows that a decision holds at that moment, and then the expired leases of requests in flight, which
	 * their instance no longer renews. Deleting such a row changes no decision: the next request of its key is
	 * decided as the first of a key never seen, as it would have been.
	 * @param max how many rows to delete at most, so that one call stays short; call again while it returns
	 * {@code max}
	 * @return how many rows were deleted
	 * @throws IllegalArgumentException if {@code max} is below 1
	 * @throws IllegalStateException if the database did not delete them
	 */
	public int deleteExpired(int max) {
		if (max < 1) {
			throw new IllegalArgumentException("max must be at least 1, was " + max);
		}
		return this.calls.deleteExpired(max);
	}

	/**
	 * {@inheritDoc}
	 * <p>
	 * Peeks, on a thread of the store's, once for each combination of algorithms that the given stacks decide
	 * together, at the state of a key of the store's prefix that the starter never writes a client's key as,
	 * {@code %warm-up}: so that a connection is open and the database has compiled the functions before the first
	 * request, which would otherwise pay for both and could take longer than the timeout. A peek takes nothing,
	 * so no client's state changes. The calls wait past the timeout if need be; they neither tell the failure
	 * listeners nor apply the failure policy, and the stage fails when one failed.
	 */
	@Override
	public Optional<WarmUp> warmUp() {
		return Optional.of(this::warmUp);
	}

	private CompletionStage<Void> warmUp(Collection<List<RateLimitPolicy>> stacks) {
		Map<List<Algorithm>, List<RateLimitPolicy>> byAlgorithms = new LinkedHashMap<>();
		for (List<RateLimitPolicy> stack : stacks) {
			byAlgorithms.putIfAbsent(stack.stream().map(RateLimitPolicy::algorithm).toList(), stack);
		}
		List<List<JdbcLimiter>> limiters = this.changes.warmUpLimiters(byAlgorithms.values(), StateCalls.WARM_UP_KEY);
		return CompletableFuture.runAsync(() -> {
			for (List<JdbcLimiter> stack : limiters) {
				try {
					this.calls.warmUp(stack);
				}
				catch (BoundedCalls.CallFailure failure) {
					throw new IllegalStateException("PostgreSQL did not answer the warm-up: " + failure.getCause(),
							failure.getCause());
				}
			}
		}, this.bounded.workers());
	}

	/**
	 * {@inheritDoc}
	 * <p>
	 * The failure policy, whether PostgreSQL is failing and since when, and how often the failure policy
	 * decided.
	 */
	@Override
	public Optional<Failures> failures() {
		return Optional.of(this.failures);
	}

	/**
	 * {@inheritDoc}
	 * <p>
	 * The stores whose heartbeat, written about once a second in the table's {@code _fleet} table, is at most
	 * three seconds old, this one included; the last count while the database does not answer.
	 */
	@Override
	public Optional<Fleet> fleet() {
		return Optional.of(this.fleet);
	}

	/**
	 * {@inheritDoc}
	 * <p>
	 * Each request in flight holds a lease in the table's {@code _leases} table, which this instance renews while
	 * the request runs: the leases of an instance that dies expire within the
	 * {@link Builder#inFlightLease(Duration) lease's life}. Calls on one key and name take turns on an advisory
	 * lock, so that the fleet never holds more than the limit at once. A call runs on the
	 * {@link Builder#executor(Executor) executor}, else on a thread of the store's, and one that the database does
	 * not answer in time is decided by the failure policy: {@code ALLOW} grants the permit, {@code DENY} refuses
	 * it, {@code LOCAL} takes one of this instance's share of the limit, {@code ceil(limit / instances)}.
	 */
	@Override
	public Optional<InFlight> inFlight() {
		return Optional.of(this.inFlight);
	}

	/** The leases of this instance's requests in flight, for the tests to renew them when they choose. */
	DatabaseLeases inFlightLeases() {
		return this.inFlight;
	}

	/**
	 * {@inheritDoc}
	 * <p>
	 * The changes of the store's key prefix, kept in the table's {@code _changes} table until removed, where
	 * instances that start later read them. Each instance tells its listener at its next heartbeat, within about
	 * a second, or at once when PostgreSQL's driver is on the class path: once a listener is set, the store holds a
	 * connection of the data source that {@code LISTEN}s on the channel named after the table, {@code <table>_changes}
	 * without the schema, on which each change is announced at its commit.
	 */
	@Override
	public Optional<SharedChanges> sharedChanges() {
		return Optional.of(this.sharedChanges);
	}

	/**
	 * Stops the store's heartbeat and takes it out of the fleet, so that the other instances' shares grow at
	 * once, and stops its threads. Decisions afterwards are decided by the failure policy.
	 */
	@Override
	public void close() {
		this.inFlight.close();
		this.sharedChanges.close();
		this.fleet.close();
		this.bounded.close();
	}

	/** Runs {@code call} on {@code executor}; a refusal fails the stage rather than the caller. */
	private static <T> CompletionStage<T> offThread(Supplier<T> call, Executor executor) {
		try {
			return CompletableFuture.supplyAsync(call, executor);
		}
		catch (RejectedExecutionException ex) {
			return CompletableFuture.failedFuture(ex);
		}
	}

	private static List<String> keys(List<KeyedPolicy> limits) {
		List<String> keys = new ArrayList<>(limits.size());
		for (KeyedPolicy limit : limits) {
			keys.add(limit.key());
		}
		return keys;
	}

	/**
	 * Builds a {@link JdbcRateLimitStore}.
	 */
	public static final class Builder {

		private final DataSource dataSource;

		private String tableName = DEFAULT_TABLE_NAME;

		private String keyPrefix = "";

		private @Nullable TimeSource timeSource;

		private boolean createSchema = true;

		private FailurePolicy failurePolicy = FailurePolicy.LOCAL;

		private Duration timeout = Duration.ofMillis(500);

		private final List<FailureListener> listeners = new ArrayList<>();

		private @Nullable Executor executor;

		private Duration inFlightLease = Duration.ofSeconds(30);

		private Builder(DataSource dataSource) {
			this.dataSource = Objects.requireNonNull(dataSource, "dataSource must not be null");
		}

		/**
		 * Sets the table of the states, which also names the functions and the index:
		 * {@value JdbcRateLimitStore#DEFAULT_TABLE_NAME} by default.
		 * @param tableName an SQL identifier of letters, digits and underscores, at most 52 characters, optionally
		 * after a schema name and a dot
		 * @return this builder
		 * @throws IllegalArgumentException if {@code tableName} is not such an identifier
		 */
		public Builder tableName(String tableName) {
			this.tableName = StateSchema.checkTableName(tableName);
			return this;
		}

		/**
		 * Sets what goes before every key in the table, so that applications sharing the table keep their keys
		 * apart: nothing by default. {@link RateLimitStore#resetAll()} and {@link #deleteExpired(int)} touch the
		 * rows of this prefix only.
		 * @param keyPrefix the prefix
		 * @return this builder
		 */
		public Builder keyPrefix(String keyPrefix) {
			this.keyPrefix = Objects.requireNonNull(keyPrefix, "keyPrefix must not be null");
			return this;
		}

		/**
		 * Sets the clock of every decision, such as a {@link dev.ratelimit.core.ManualTimeSource} in tests, read in
		 * Unix epoch nanoseconds when a policy has a calendar window; by default the database's clock decides.
		 * @param timeSource the clock
		 * @return this builder
		 */
		public Builder timeSource(TimeSource timeSource) {
			this.timeSource = Objects.requireNonNull(timeSource, "timeSource must not be null");
			return this;
		}

		/**
		 * Sets whether {@link #build()} creates the table, its index and the functions where missing, as it does
		 * by default; without it, the application's migrations create them from
		 * {@code META-INF/ratelimit/sql/schema.sql}.
		 * @param createSchema whether to create the schema
		 * @return this builder
		 */
		public Builder createSchema(boolean createSchema) {
			this.createSchema = createSchema;
			return this;
		}

		/**
		 * Sets what is decided when the database does not decide: {@link FailurePolicy#LOCAL} by default.
		 * @param failurePolicy the failure policy
		 * @return this builder
		 */
		public Builder failurePolicy(FailurePolicy failurePolicy) {
			this.failurePolicy = Objects.requireNonNull(failurePolicy, "failurePolicy must not be null");
			return this;
		}

		/**
		 * Sets how long a call may take, from asking the data source for a connection to the database's reply,
		 * before the failure policy decides its request instead: 500 ms by default, which a decision on a row that
		 * many others wait for may take on a busy database. The statement is then
		 * cancelled. After {@value OutageDetector#FAILURES_TO_SWITCH} calls in a row that failed or were late, over
		 * at least one timeout, or at once when the database cannot be reached, the store declares an outage and
		 * sends every new decision to the failure policy without waiting, but one at a time to the database, until
		 * it answers again.
		 * @param timeout the timeout, positive
		 * @return this builder
		 */
		public Builder timeout(Duration timeout) {
			this.timeout = Durations.positive(timeout, "timeout");
			return this;
		}

		/**
		 * Adds a listener told of every decision made without the database, for instance to count them, as
		 * {@link Failures#addListener} does once the store is built.
		 * @param listener the listener
		 * @return this builder
		 */
		public Builder onFailure(FailureListener listener) {
			this.listeners.add(Objects.requireNonNull(listener, "listener must not be null"));
			return this;
		}

		/**
		 * Sets where {@link RateLimitStore#decideAllAsync}, {@link RateLimitStore#giveBackAsync} and
		 * {@link RateLimitStore#inspectAsync} call the database, so that their caller does not wait for it: by
		 * default they call it on the calling thread and return a completed stage. A bounded pool no larger than
		 * the data source's suits it; a stage fails with a {@link RejectedExecutionException} when the executor
		 * refuses the call. The store never shuts the executor down.
		 * @param executor where the asynchronous calls wait for the database
		 * @return this builder
		 */
		public Builder executor(Executor executor) {
			this.executor = Objects.requireNonNull(executor, "executor must not be null");
			return this;
		}

		/**
		 * Sets how long the lease of a request in flight lasts unless this instance renews it, which it does every
		 * third of that while the request runs: the permits of an instance that dies holding them return within
		 * it. 30 seconds by default.
		 * @param lease the lease's life, at least a millisecond
		 * @return this builder
		 * @throws IllegalArgumentException if {@code lease} is shorter than a millisecond
		 */
		public Builder inFlightLease(Duration lease) {
			this.inFlightLease = Durations.atLeastAMillisecond(lease, "inFlightLease");
			return this;
		}

		/**
		 * Builds the store, creating its schema first unless told not to.
		 * @return the store
		 * @throws IllegalStateException if the schema could not be created
		 */
		public JdbcRateLimitStore build() {
			return new JdbcRateLimitStore(this);
		}

	}

}
