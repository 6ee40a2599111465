package dev.ratelimit.core.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.ToIntFunction;

import org.jspecify.annotations.Nullable;

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
import dev.ratelimit.core.memory.InMemoryRateLimitStore;

/**
 * A {@link RateLimitStore} that keeps every key's state in Redis, shared by every instance that uses the same Redis
 * and key prefix.
 * <p>
 * Each decision that Redis makes is exactly one Lua script call, atomic in Redis: one key per policy, or one call over
 * the keys of all policies for {@link #decideAll stacked limits}, whatever their keys. On a {@link
 * Builder#cluster(boolean) Cluster}, a stack whose keys fall into several slots is decided one slot at a time, in the
 * order of the slots, and the permits of the slots before one that denies are {@link #giveBack given back}, so that no
 * limit ever admits more than it allows. The scripts make the same decisions as the {@link InMemoryRateLimitStore},
 * with the same integer arithmetic. A client's keys are {@code <prefix>{<client key>}:<policy name>}: the braces are a
 * Redis Cluster hash tag, so that the keys of one client live in one slot; {@code %}, <code>{</code> and
 * <code>}</code> in a client key are written {@code %25}, {@code %7B} and {@code %7D}, and the empty key as {@code %}.
 * Every key expires once it is back to its full quota.
 * <p>
 * Time comes from Redis' {@code TIME}, so that instances with skewed clocks agree, unless a {@link
 * Builder#timeSource(TimeSource) time source} is set. Times in decisions are whole nanoseconds, as the in-memory store
 * reports them.
 * <p>
 * When a call fails, Redis cannot be reached, or it does not answer within the {@link Builder#maxWait(Duration)
 * maximum wait}, the {@link FailurePolicy} decides that request instead; a reply later than the {@link
 * Builder#timeout(Duration) timeout} but within the wait still decides it. The store switches every decision to the
 * failure policy only on evidence of an outage: Redis unreachable, or {@value OutageDetector#FAILURES_TO_SWITCH} calls
 * in a row failed or unanswered within the timeout, sent over at least one timeout. While Redis is failing, one
 * decision at a time still goes to Redis to find out whether it is back, and the first answer ends the outage. A call
 * the store gave up on never changes anything in Redis afterwards: it carries the Redis time at which the store stops
 * waiting, and a script that Redis runs later takes nothing.
 * <p>
 * Every instance sends a heartbeat to Redis about once a second from the first decision or {@link #warmUp() warm-up}
 * on, which tells it how many instances share the quotas (its {@link #fleet() fleet}); under {@link
 * FailurePolicy#LOCAL} each instance then enforces its share of every limit while Redis is away. The heartbeat also
 * brings the runtime changes of policies that the fleet {@link #sharedChanges() shares}, and the resets made
 * elsewhere. Every decision made without Redis is reported to the {@link #failures() failure} listeners and counted in
 * the log, which holds at most one stack trace a minute. {@link #close() Closing} the store stops its heartbeat and
 * leaves the fleet.
 * <p>
 * A request that Redis has denied is denied again locally, without a call, until the retry-after that Redis gave has
 * passed, counted from when the call was sent, with the same decision that Redis would give (see {@link
 * Builder#localDenials(boolean)}): a client hammering a key it has exhausted costs Redis nothing.
 * <p>
 * {@link #decideAllAsync} and {@link #giveBackAsync} make the same decisions with the same calls, through the same
 * steps, for a caller that must not wait, such as an event loop: the calling thread sends the first call and returns,
 * each reply goes on from the thread that delivered it, and a timer, not a waiting thread, gives up on Redis after the
 * maximum wait.
 */
public final class RedisRateLimitStore implements RateLimitStore, AutoCloseable {

	private static final System.Logger logger = System.getLogger(RedisRateLimitStore.class.getName());

	private final DecisionCalls calls;

	private final StoreFailures failures;

	private final RedisFleet fleet;

	private final KeyDecisions decisions;

	private final StackDecisions stacks;

	private final PolicyLimiters<RedisLimiter> transitions;

	private final PrefixReset prefixReset;

	private final InFlightLeases inFlight;

	private RedisRateLimitStore(Builder builder) {
		boolean ownScheduler = builder.scheduler == null;
		ScheduledExecutorService scheduler = ownScheduler ? RedisFleet.ownScheduler() : builder.scheduler;
		LocalDenials denials = builder.localDenials ? new LocalDenials() : null;
		RedisClock clock = new RedisClock(builder.ticker);
		KnownStates known = new KnownStates(DecisionCalls.clock(builder.timeSource, clock));
		// on a Cluster each slot fails alone: the slot of a client key, and of a key the store writes
		ToIntFunction<String> clientSlots = builder.cluster ? (client) -> RedisKeys.slot(RedisKeys.escape(client))
				: null;
		Fallback fallback = new Fallback(builder.failurePolicy, FailurePolicyDecisions.local(builder.fallback, builder.timeSource),
				this::fleetSize, known);
		this.failures = new StoreFailures(() -> new OutageDetector<>(builder.timeout.toNanos(), builder.ticker),
				clientSlots, fallback,
				new FailureLog(logger, "Redis", builder.failurePolicy, builder.ticker,
						ownScheduler ? scheduler : Runnable::run));
		builder.listeners.forEach(this.failures::addListener);
		ScriptCaller caller = new ScriptCaller(builder.executor, builder.timeout,
				ScriptCaller.maxWait(builder.timeout, builder.maxWait), clock, builder.timer, this.failures,
				builder.cluster ? RedisKeys::slotOfKey : (key) -> 0);
		this.calls = new DecisionCalls(builder.keys, builder.timeSource, caller);
		this.fleet = new RedisFleet(caller, builder.keys, this.failures, denials, scheduler, ownScheduler);
		this.decisions = new KeyDecisions(this.calls, this.failures, this.fleet, denials, known,
				(builder.timeSource != null) ? builder.timeSource : builder.ticker, builder.timeSource != null);
		this.transitions = new PolicyLimiters<>((policy, stateName, predecessors) -> new RedisLimiter(this.decisions,
				policy, stateName, predecessors), (limiter) -> limiter.stateName, this.calls::now);
		this.stacks = new StackDecisions(this.calls, this.failures, this.fleet, this.decisions, this.transitions,
				known, builder.cluster);
		this.failures.onAnswer(new Settlement(known, this.transitions, this.calls, scheduler)::settle);
		this.prefixReset = new PrefixReset(caller, builder.keys, builder.cluster, denials, known, fallback, this.fleet);
		this.inFlight = new InFlightLeases(caller, builder.keys, this.calls, fallback,
				TimeUnit.NANOSECONDS.toMicros(builder.inFlightLease.toNanos()), scheduler);
	}

	/**
	 * Returns how long a request waits for Redis' reply unless {@link Builder#maxWait(Duration) set}: 500 ms, or
	 * the timeout if that is longer.
	 * @param timeout the store's timeout
	 * @return the maximum wait
	 */
	public static Duration defaultMaxWait(Duration timeout) {
		return ScriptCaller.maxWait(timeout, null);
	}

	private int fleetSize() {
		return this.fleet.size();
	}

	/**
	 * Returns a builder of Redis stores.
	 * @param executor runs the scripts in Redis
	 * @return a builder with the key prefix {@code ratelimit:}, Redis' clock, a timeout of 100 ms, a maximum wait
	 * of 500 ms and the {@link FailurePolicy#LOCAL LOCAL} failure policy
	 */
	public static Builder builder(RedisScriptExecutor executor) {
		return new Builder(executor);
	}

	@Override
	public RateLimiter limiter(RateLimitPolicy policy) {
		return this.transitions.limiter(policy);
	}

	/**
	 * {@inheritDoc}
	 * <p>
	 * The changed policy keeps its states under keys of their own, named after its values
	 * ({@code <policy name>@<limit>/<window in microseconds>/<burst>}), and each key carries its permits over in
	 * one more script call before its first decision after the change. Every instance that applies the same
	 * change names the same keys; a change back to the values the policy had before its first change uses its
	 * original keys again, and a key that still holds a state there from before keeps it, like any key that a
	 * change back finds. Decisions already under way when the change is made still take from the keys of
	 * {@code from}.
	 */
	@Override
	public void change(RateLimitPolicy from, RateLimitPolicy to) {
		this.transitions.change(from, to);
	}

	@Override
	public List<Decision> decideAll(List<KeyedPolicy> limits) {
		RateLimitStore.checkStack(limits);
		if (limits.size() == 1) {
			return List.of(limiter(limits.get(0).policy()).decide(limits.get(0).key()));
		}
		return ScriptCaller.settled(this.stacks.decide(limits, true));
	}

	/**
	 * {@inheritDoc}
	 * <p>
	 * Makes the decision that {@link #decideAll(List)} makes, with the same calls, without waiting for Redis:
	 * the calling thread sends the first call and returns, and each reply sends the next call, if any, on the
	 * thread that completed it. The stage completes on that thread: the calling thread for a decision made
	 * without a call (a local denial, or the failure policy during an outage), the executor's thread for a
	 * reply, or the JDK's {@link CompletableFuture} timer thread when Redis did not answer within the maximum wait,
	 * after cancelling the executor's stage. The failure listeners run on that thread too. An executor that
	 * runs calls on the caller's thread, as a Jedis one does, returns a completed stage: the calling thread
	 * then waits for Redis, as for {@code decideAll}.
	 */
	@Override
	public CompletionStage<List<Decision>> decideAllAsync(List<KeyedPolicy> limits) {
		try {
			RateLimitStore.checkStack(limits);
			return this.stacks.decide(limits, false);
		}
		catch (RuntimeException | Error ex) {
			return CompletableFuture.failedFuture(ex);
		}
	}

	/**
	 * Gives back what the allowed decisions took, in one script call, or on a Cluster one per slot, and
	 * forgets the local denials of their keys. A call that fails leaves its permits taken, which is stricter,
	 * never more lenient; it is counted in the log, at most one line per ten seconds, and reported to the
	 * {@link FailureListener#onGiveBackFailure failure listeners}.
	 */
	@Override
	public void giveBack(List<KeyedPolicy> limits, List<Decision> decisions) {
		ScriptCaller.settled(this.stacks.giveBack(limits, decisions, true));
	}

	/**
	 * {@inheritDoc}
	 * <p>
	 * Gives back as {@link #giveBack(List, List)} does, without waiting for Redis, on the threads that
	 * {@link #decideAllAsync(List)} describes; the stage completes once every call has been answered or given
	 * up on, and does not fail for a call that failed.
	 */
	@Override
	public CompletionStage<Void> giveBackAsync(List<KeyedPolicy> limits, List<Decision> decisions) {
		try {
			return this.stacks.giveBack(limits, decisions, false);
		}
		catch (RuntimeException | Error ex) {
			return CompletableFuture.failedFuture(ex);
		}
	}

	/**
	 * {@inheritDoc}
	 * <p>
	 * Asks Redis, waiting at most the maximum wait, after carrying the key's permits over if its policy has just
	 * changed. When Redis does not answer, the failure policy does, as it would decide such a request, taking
	 * nothing: {@code ALLOW} allows it, {@code DENY} refuses it, {@code LOCAL} answers from the share of the
	 * limit it decides on.
	 */
	@Override
	public Decision inspect(String key, RateLimitPolicy policy) {
		Objects.requireNonNull(key, "key must not be null");
		return this.decisions.inspect(key, this.transitions.limiter(policy.shared()));
	}

	/**
	 * {@inheritDoc}
	 * <p>
	 * Asks Redis without waiting for it, and answers as {@link #inspect} does when Redis does not.
	 */
	@Override
	public CompletionStage<Decision> inspectAsync(String key, RateLimitPolicy policy) {
		Objects.requireNonNull(key, "key must not be null");
		return this.decisions.inspectAsync(key, this.transitions.limiter(policy.shared()));
	}

	/**
	 * {@inheritDoc}
	 * <p>
	 * Deletes the key's states in Redis, waiting at most the maximum wait, and forgets the denials this instance keeps
	 * for it; every decision that reaches Redis sees the reset at once. The reset is announced on the
	 * {@link #fleetChannel() fleet's channel}, for instances that subscribe to forget their denials of the key
	 * at once, and every other instance forgets all the denials it keeps at its next heartbeat, within about a
	 * second.
	 * @throws IllegalStateException if Redis did not delete them
	 */
	@Override
	public void reset(String key, RateLimitPolicy policy) {
		Objects.requireNonNull(key, "key must not be null");
		this.decisions.reset(key, this.transitions.limiter(policy.shared()));
	}

	@Override
	public Optional<Fleet> fleet() {
		return Optional.of(this.fleet);
	}

	@Override
	public Optional<SharedChanges> sharedChanges() {
		return Optional.of(this.fleet);
	}

	@Override
	public Optional<Failures> failures() {
		return Optional.of(this.failures);
	}

	/**
	 * {@inheritDoc}
	 * <p>
	 * Runs, once each, the scripts that the given policies use, on a key that no client key is written as, so
	 * that the connection is open and Redis has compiled the scripts before the first request: that request
	 * would otherwise pay for both, which can take longer than the timeout. It also sends the first heartbeat,
	 * so that the store knows its fleet before the first request. The key it writes expires like any other,
	 * and no client's state changes. It neither tells the failure listeners nor applies the failure policy; the
	 * stage fails when one call failed.
	 */
	@Override
	public Optional<WarmUp> warmUp() {
		return Optional.of(this::warmUp);
	}

	private CompletionStage<Void> warmUp(Collection<List<RateLimitPolicy>> stacks) {
		return CompletableFuture.allOf(
				this.calls.warmUp(this.transitions.warmUpLimiters(stacks, RedisKeys.WARM_UP_CLIENT)),
				this.fleet.warmUp());
	}

	/**
	 * {@inheritDoc}
	 * <p>
	 * Deletes the state of every client under the store's key prefix, and of no other prefix, with {@code SCAN}
	 * steps of a thousand keys on Redis, or on every primary of a Cluster, each call waited for at most the maximum
	 * wait, and forgets what this instance keeps of them: its denials, what Redis last told of each key, and what
	 * the failure policy admitted. The fleet's shared changes stay. Another instance that still expects a state
	 * deleted does not restore it, and forgets every denial it keeps at its next heartbeat, within about a second.
	 */
	@Override
	public Optional<ResetAll> resetAll() {
		return Optional.of(this.prefixReset::resetAll);
	}

	/**
	 * {@inheritDoc}
	 * <p>
	 * Each request in flight holds a lease in Redis, which this instance renews while the request runs: the leases
	 * of an instance that dies expire within the {@link Builder#inFlightLease(Duration) lease's life}. A call that
	 * Redis does not answer in time is decided by the failure policy: {@code ALLOW} grants the permit,
	 * {@code DENY} refuses it, {@code LOCAL} takes one of this instance's share of the limit,
	 * {@code ceil(limit / instances)}.
	 */
	@Override
	public Optional<InFlight> inFlight() {
		return Optional.of(this.inFlight);
	}

	/** The leases of this instance's requests in flight, for the tests to renew them when they choose. */
	InFlightLeases inFlightLeases() {
		return this.inFlight;
	}

	/**
	 * Returns the Redis Pub/Sub channel on which every reset and every shared change is announced. The heartbeat
	 * acts upon both within about a second; an application that subscribes can act at once by handing each
	 * message to {@link #receive}.
	 * @return the channel of this store's key prefix
	 */
	public String fleetChannel() {
		return this.fleet.channel();
	}

	/**
	 * Acts upon a message of the {@link #fleetChannel() fleet's channel} at once rather than at the next heartbeat:
	 * a reset anywhere in the fleet makes this instance forget its local denials of that key, and a shared change
	 * runs the {@link SharedChanges#onChange listener} of the shared changes. Any other message is ignored.
	 * @param message the message, as published
	 */
	public void receive(String message) {
		this.fleet.receive(Objects.requireNonNull(message, "message must not be null"));
	}

	/**
	 * Stops the heartbeat and leaves the fleet, waiting for Redis at most the maximum wait, so that the other
	 * instances count this one out at once, and writes the log lines still queued. Decisions made after closing
	 * still work, without a heartbeat, and log on the thread that failed.
	 */
	@Override
	public void close() {
		this.inFlight.close();
		this.fleet.close();
	}

	/**
	 * Builds a {@link RedisRateLimitStore}.
	 */
	public static final class Builder {

		private final RedisScriptExecutor executor;

		private RedisKeys keys = new RedisKeys("ratelimit:");

		private @Nullable TimeSource timeSource;

		private Duration timeout = Duration.ofMillis(100);

		private @Nullable Duration maxWait;

		private FailurePolicy failurePolicy = FailurePolicy.LOCAL;

		private Duration inFlightLease = Duration.ofSeconds(30);

		private @Nullable RateLimitStore fallback;

		private final List<FailureListener> listeners = new ArrayList<>();

		private @Nullable ScheduledExecutorService scheduler;

		private boolean localDenials = true;

		private boolean cluster;

		/** Real time, for the timeout's deadline, the spans of failures and the log's periods. */
		private TimeSource ticker = TimeSource.system();

		/** What gives up on an asynchronous call after the timeout and the maximum wait. */
		private ScriptCaller.Timer timer = ScriptCaller.Timer.JDK;

		private Builder(RedisScriptExecutor executor) {
			this.executor = Objects.requireNonNull(executor, "executor must not be null");
		}

		/**
		 * Sets the prefix of every key the store writes; instances that share a prefix (and a Redis) share
		 * their quotas.
		 * @param keyPrefix the prefix, without braces
		 * @return this builder
		 */
		public Builder keyPrefix(String keyPrefix) {
			this.keys = new RedisKeys(keyPrefix);
			return this;
		}

		/**
		 * Makes the store read the time from {@code timeSource} and pass it to Redis, instead of using Redis'
		 * own clock. Every instance sharing the keys must then use the same clock: this is meant for tests and
		 * for replaying recorded traffic.
		 * @param timeSource the time source; its value in microseconds is the scripts' {@code now}
		 * @return this builder
		 */
		public Builder timeSource(TimeSource timeSource) {
			this.timeSource = Objects.requireNonNull(timeSource, "timeSource must not be null");
			return this;
		}

		/**
		 * Sets how long a request in flight holds its lease unless this instance renews it, which it does every
		 * third of that time while the request runs: the leases of an instance that dies expire at most this
		 * long after its last renewal. 30 seconds unless set.
		 * @param lease the lease's life, at least a millisecond
		 * @return this builder
		 */
		public Builder inFlightLease(Duration lease) {
			this.inFlightLease = Durations.atLeastAMillisecond(lease, "inFlightLease");
			return this;
		}

		/**
		 * Sets how long Redis may take to answer a call before the call counts as a failure: after
		 * {@value OutageDetector#FAILURES_TO_SWITCH} such calls in a row, over at least one timeout, the store
		 * declares an outage and sends every new decision to the failure policy without waiting, until Redis
		 * answers again. A request whose call is under way still waits for its reply up to the
		 * {@link #maxWait(Duration) maximum wait}.
		 * @param timeout the timeout, positive
		 * @return this builder
		 */
		public Builder timeout(Duration timeout) {
			this.timeout = Durations.positive(timeout, "timeout");
			return this;
		}

		/**
		 * Sets how long a request waits for the reply to its call before the failure policy decides it instead,
		 * 500 ms by default, or the timeout if that is longer. A reply later than the timeout but within this wait
		 * is Redis' decision, exact: a Redis that is slow for a moment (a pause of its process, a busy core, a cold
		 * client) costs its requests time, not exactness. Redis runs no call after its wait has ended.
		 * @param maxWait the maximum wait, no shorter than the timeout
		 * @return this builder
		 */
		public Builder maxWait(Duration maxWait) {
			this.maxWait = Durations.positive(maxWait, "maxWait");
			return this;
		}

		/**
		 * Sets what is decided when Redis does not decide.
		 * @param failurePolicy the failure policy
		 * @return this builder
		 */
		public Builder failurePolicy(FailurePolicy failurePolicy) {
			this.failurePolicy = Objects.requireNonNull(failurePolicy, "failurePolicy must not be null");
			return this;
		}

		/**
		 * Sets the store that decides under {@link FailurePolicy#LOCAL}; by default an
		 * {@link InMemoryRateLimitStore} with the same time source.
		 * @param fallback the local store
		 * @return this builder
		 */
		public Builder fallback(RateLimitStore fallback) {
			this.fallback = Objects.requireNonNull(fallback, "fallback must not be null");
			return this;
		}

		/**
		 * Adds a listener told of every decision made without Redis, for instance to count them, as
		 * {@link Failures#addListener} does once the store is built.
		 * @param listener the listener
		 * @return this builder
		 */
		public Builder onFailure(FailureListener listener) {
			this.listeners.add(Objects.requireNonNull(listener, "listener must not be null"));
			return this;
		}

		/**
		 * Sets where the fleet heartbeat runs, about once a second; by default on a daemon thread of the
		 * store's own, which {@link RedisRateLimitStore#close()} stops, and which also writes the store's log
		 * lines off the request threads. A scheduler given here is left running, and the log is written on the
		 * thread that failed.
		 * @param scheduler the scheduler
		 * @return this builder
		 */
		public Builder scheduler(ScheduledExecutorService scheduler) {
			this.scheduler = Objects.requireNonNull(scheduler, "scheduler must not be null");
			return this;
		}

		/**
		 * Sets whether the store denies a request locally, without calling Redis, while a denial that Redis
		 * gave to the same request still holds (on by default). Redis' reply would be the same: a denied
		 * request takes nothing, and every other request of its policies is denied as well meanwhile. Only
		 * Redis' own denials are kept, never an admission or a failure policy's decision, and a
		 * {@link RedisRateLimitStore#reset(String, RateLimitPolicy) reset} forgets them on every instance.
		 * @param enabled whether denials are kept
		 * @return this builder
		 */
		public Builder localDenials(boolean enabled) {
			this.localDenials = enabled;
			return this;
		}

		/**
		 * Sets whether Redis is a Cluster (off by default). The keys of one client share a slot, but a stack
		 * whose limits are on several keys, such as a limit per client under one for every client, spans
		 * slots: on a Cluster it is decided one slot at a time, in the order of the slots, and the permits of
		 * the slots before one that denies are given back, so that no limit ever admits more than it allows;
		 * on a single Redis it is one atomic call.
		 * @param cluster whether Redis is a Cluster
		 * @return this builder
		 */
		public Builder cluster(boolean cluster) {
			this.cluster = cluster;
			return this;
		}

		/** Gives up on asynchronous calls on {@code scheduler} instead of the JDK's timer thread, for tests. */
		Builder timeouts(ScheduledExecutorService scheduler) {
			Objects.requireNonNull(scheduler, "scheduler must not be null");
			this.timer = (task, delayNanos) -> scheduler.schedule(task, delayNanos, TimeUnit.NANOSECONDS);
			return this;
		}

		/** Replaces real time where the store measures it itself, for tests. */
		Builder ticker(TimeSource ticker) {
			this.ticker = Objects.requireNonNull(ticker, "ticker must not be null");
			return this;
		}

		/**
		 * Builds the store. Nothing is sent to Redis until the first decision or warm-up.
		 * @return the store
		 */
		public RedisRateLimitStore build() {
			return new RedisRateLimitStore(this);
		}

	}

}
