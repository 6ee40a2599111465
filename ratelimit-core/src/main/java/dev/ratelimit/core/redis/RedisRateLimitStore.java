package dev.ratelimit.core.redis;

import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;

import org.jspecify.annotations.Nullable;

import dev.ratelimit.core.Decision;
import dev.ratelimit.core.KeyedPolicy;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.RateLimitStore;
import dev.ratelimit.core.RateLimiter;
import dev.ratelimit.core.TimeSource;
import dev.ratelimit.core.memory.InMemoryRateLimitStore;

/**
 * A {@link RateLimitStore} that keeps every key's state in Redis, shared by every instance that uses the same
 * Redis and key prefix.
 * <p>
 * Each decision that Redis makes is exactly one Lua script call, atomic in Redis: one key per policy, or one
 * call over the keys of all policies for {@link #decideAll stacked limits}, whatever their keys. On a
 * {@link Builder#cluster(boolean) Cluster}, a stack whose keys fall into several slots is decided one slot at a
 * time, in the order of the slots, and the permits of the slots before one that denies are
 * {@link #giveBack given back}, so that no limit ever admits more than it allows. The scripts make the same decisions as the
 * {@link InMemoryRateLimitStore}, with the same integer arithmetic. A client's keys are
 * {@code <prefix>{<client key>}:<policy name>}: the braces are a Redis Cluster hash tag, so that the keys of one
 * client live in one slot; {@code %}, <code>{</code> and <code>}</code> in a client key are written
 * {@code %25}, {@code %7B} and {@code %7D}, and the empty key as {@code %}. Every key expires once it is back to
 * its full quota.
 * <p>
 * Time comes from Redis' {@code TIME}, so that instances with skewed clocks agree, unless a
 * {@link Builder#timeSource(TimeSource) time source} is set. Times in decisions are whole nanoseconds, as the
 * in-memory store reports them.
 * <p>
 * When a call fails, Redis cannot be reached, or it does not answer within the {@link Builder#timeout(Duration)
 * timeout}, the {@link FailurePolicy} decides that request instead. The store switches every decision to the
 * failure policy only on evidence of an outage: Redis unreachable, or {@value OutageDetector#FAILURES_TO_SWITCH}
 * calls in a row failed, sent over at least one timeout; one late reply only costs its own request. While Redis is failing, one decision at a
 * time still goes to Redis to find out whether it is back, and the first answer ends the outage. A call the
 * store gave up on never changes anything in Redis afterwards: it carries the Redis time at which the store
 * stops waiting, and a script that Redis runs later takes nothing.
 * <p>
 * Every instance sends a heartbeat to Redis about once a second from the first decision or
 * {@link #warmUp warm-up} on, which tells it how many instances share the quotas; under
 * {@link FailurePolicy#LOCAL} each instance then enforces its share of every limit while Redis is away. Every
 * decision made without Redis is reported to the {@link Builder#onFailure(FailureListener) failure listener}
 * and counted in the log, which holds at most one stack trace a minute. {@link #close() Closing} the store
 * stops its heartbeat and leaves the fleet.
 * <p>
 * A request that Redis has denied is denied again locally, without a call, until the retry-after that Redis
 * gave has passed, counted from when the call was sent, with the same decision that Redis would give (see
 * {@link Builder#localDenials(boolean)}): a client hammering a key it has exhausted costs Redis nothing.
 * <p>
 * {@link #decideAllAsync} and {@link #giveBackAsync} make the same decisions with the same calls for a caller
 * that must not wait, such as an event loop: the calling thread sends the first call and returns, each reply
 * goes on from the thread that delivered it, and a timer, not a waiting thread, gives up on Redis after the
 * timeout.
 */
public final class RedisRateLimitStore implements RateLimitStore, AutoCloseable {

	private static final System.Logger logger = System.getLogger(RedisRateLimitStore.class.getName());

	/** Where a chain of calls starts, and what a chain of none is. */
	private static final CompletableFuture<Void> DONE = CompletableFuture.completedFuture(null);

	private static final long CLOSE_GRACE_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

	/** How many policies, each cost counted apart, keep their limiter. */
	private static final int MAX_LIMITERS = 1024;

	private final ScriptCaller caller;

	private final RedisKeys keys;

	private final DecisionCalls calls;

	private final OutageDetector detector;

	private final Fleet fleet;

	private final Fallback fallback;

	private final FailureListener listener;

	private final FailureLog failureLog;

	private final @Nullable LocalDenials denials;

	private final ScheduledExecutorService scheduler;

	private final boolean cluster;

	private final boolean ownScheduler;

	private final AtomicBoolean heartbeatStarted = new AtomicBoolean();

	private volatile boolean closed;

	private volatile @Nullable ScheduledFuture<?> nextHeartbeat;

	private final ConcurrentHashMap<RateLimitPolicy, RedisLimiter> limiters = new ConcurrentHashMap<>();

	/** The policy each changed policy had before its first change, at one permit, by name. */
	private final ConcurrentHashMap<String, RateLimitPolicy> originals = new ConcurrentHashMap<>();

	/** The policy each changed policy is now, at one permit, and what it changed from, by name. */
	private final ConcurrentHashMap<String, Transition> transitions = new ConcurrentHashMap<>();

	private volatile Runnable sharedChangesListener = () -> {
	};

	/** The fleet's counts of changes and resets that this instance has acted upon. */
	private long changesSeen = -1;

	private long resetsSeen = -1;

	private RedisRateLimitStore(Builder builder) {
		this.caller = new ScriptCaller(builder.executor, builder.timeout, new RedisClock(builder.ticker),
				builder.timer);
		this.keys = builder.keys;
		this.calls = new DecisionCalls(builder.keys, builder.timeSource, this.caller);
		this.detector = new OutageDetector(builder.timeout.toNanos(), builder.ticker);
		this.fleet = new Fleet(this.caller, builder.keys);
		RateLimitStore local = builder.fallback;
		if (local == null) {
			InMemoryRateLimitStore.Builder memory = InMemoryRateLimitStore.builder();
			if (builder.timeSource != null) {
				memory.timeSource(builder.timeSource);
			}
			local = memory.build();
		}
		this.fallback = new Fallback(builder.failurePolicy, local, this.fleet::size);
		this.listener = builder.listener;
		this.denials = builder.localDenials ? new LocalDenials() : null;
		this.cluster = builder.cluster;
		this.ownScheduler = builder.scheduler == null;
		this.scheduler = (builder.scheduler != null) ? builder.scheduler : ownScheduler();
		this.failureLog = new FailureLog(logger, builder.failurePolicy, builder.ticker,
				this.ownScheduler ? this.scheduler : Runnable::run);
	}

	/** One daemon thread for the heartbeat and the log; what is queued when the store closes is still written. */
	private static ScheduledExecutorService ownScheduler() {
		ScheduledThreadPoolExecutor scheduler = new ScheduledThreadPoolExecutor(1, (task) -> {
			Thread thread = new Thread(task, "ratelimit-redis-heartbeat");
			thread.setDaemon(true);
			return thread;
		});
		scheduler.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
		return scheduler;
	}

	/**
	 * Returns a builder of Redis stores.
	 * @param executor runs the scripts in Redis
	 * @return a builder with the key prefix {@code ratelimit:}, Redis' clock, a timeout of 100 ms and the
	 * {@link FailurePolicy#LOCAL LOCAL} failure policy
	 */
	public static Builder builder(RedisScriptExecutor executor) {
		return new Builder(executor);
	}

	@Override
	public RateLimiter limiter(RateLimitPolicy policy) {
		RedisLimiter limiter = this.limiters.get(policy);
		if (limiter != null) {
			return limiter;
		}
		Objects.requireNonNull(policy, "policy must not be null");
		// costs computed per request would grow the cache without bound: beyond it, a limiter per request
		return (this.limiters.size() < MAX_LIMITERS) ? this.limiters.computeIfAbsent(policy, this::newLimiter)
				: newLimiter(policy);
	}

	/** A limiter of {@code policy}, with the name of its state and, if a change made it, what it changed from. */
	private RedisLimiter newLimiter(RateLimitPolicy policy) {
		RateLimitPolicy original = this.originals.get(policy.name());
		String stateName = (original != null) ? RedisKeys.stateName(policy, original) : policy.name();
		Transition transition = this.transitions.get(policy.name());
		return new RedisLimiter(this, policy, stateName,
				(transition != null && transition.policy().equals(base(policy))) ? transition.predecessors()
						: List.of());
	}

	private static RateLimitPolicy base(RateLimitPolicy policy) {
		return (policy.cost() == 1) ? policy : policy.withCost(1);
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
		if (!RateLimitStore.checkChange(from, to)) {
			return;
		}
		RateLimitPolicy previous = base(from);
		RateLimitPolicy next = base(to);
		synchronized (this.transitions) {
			RateLimitPolicy original = this.originals.computeIfAbsent(previous.name(), (name) -> previous);
			String target = RedisKeys.stateName(next, original);
			long now = this.calls.now();
			List<RedisLimiter.Predecessor> predecessors = new ArrayList<>();
			predecessors.add(new RedisLimiter.Predecessor(
					new RedisLimiter(this, previous, RedisKeys.stateName(previous, original), List.of()),
					now + from.fullAfter().toNanos()));
			Transition before = this.transitions.get(previous.name());
			if (before != null && before.policy().equals(previous)) {
				for (RedisLimiter.Predecessor older : before.predecessors()) {
					if (predecessors.size() < RateLimitStore.MAX_CARRIED_CHANGES && older.untilNanos() > now
							&& !older.limiter().stateName.equals(target) && predecessors.stream()
								.noneMatch((kept) -> kept.limiter().stateName.equals(older.limiter().stateName))) {
						predecessors.add(older);
					}
				}
			}
			this.transitions.put(next.name(), new Transition(next, List.copyOf(predecessors)));
			this.limiters.keySet().removeIf((policy) -> policy.name().equals(next.name()));
		}
	}

	@Override
	public List<Decision> decideAll(List<KeyedPolicy> limits) {
		RateLimitStore.checkStack(limits);
		if (limits.size() == 1) {
			return List.of(limiter(limits.get(0).policy()).decide(limits.get(0).key()));
		}
		List<RedisLimiter> limiters = limiters(limits);
		String key = sharedKey(limits);
		if (key != null) {
			return decide(key, limiters);
		}
		return ScriptCaller.settled(decideAcross(limits, limiters, true));
	}

	/**
	 * {@inheritDoc}
	 * <p>
	 * Makes the decision that {@link #decideAll(List)} makes, with the same calls, without waiting for Redis:
	 * the calling thread sends the first call and returns, and each reply sends the next call, if any, on the
	 * thread that completed it. The stage completes on that thread: the calling thread for a decision made
	 * without a call (a local denial, or the failure policy during an outage), the executor's thread for a
	 * reply, or the JDK's {@link CompletableFuture} timer thread when Redis did not answer within the timeout,
	 * after cancelling the executor's stage. The failure listener runs on that thread too. An executor that
	 * runs calls on the caller's thread, as a Jedis one does, returns a completed stage: the calling thread
	 * then waits for Redis, as for {@code decideAll}.
	 */
	@Override
	public CompletionStage<List<Decision>> decideAllAsync(List<KeyedPolicy> limits) {
		try {
			RateLimitStore.checkStack(limits);
			List<RedisLimiter> limiters = limiters(limits);
			String key = sharedKey(limits);
			if (key != null) {
				return decideAsync(key, limiters);
			}
			return decideAcross(limits, limiters, false);
		}
		catch (RuntimeException | Error ex) {
			return CompletableFuture.failedFuture(ex);
		}
	}

	/**
	 * Gives back what the allowed decisions took, in one script call, or on a Cluster one per slot, and
	 * forgets the local denials of their keys. A call that fails leaves its permits taken, which is stricter,
	 * never more lenient; it is counted in the log, at most one line per ten seconds, and reported to the
	 * {@link FailureListener#onGiveBackFailure failure listener}.
	 */
	@Override
	public void giveBack(List<KeyedPolicy> limits, List<Decision> decisions) {
		ScriptCaller.settled(giveBack(limits, decisions, true));
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
			return giveBack(limits, decisions, false);
		}
		catch (RuntimeException | Error ex) {
			return CompletableFuture.failedFuture(ex);
		}
	}

	/** Gives back, one slot after another; each call waited for if {@code wait}, else chained on its reply. */
	private CompletableFuture<Void> giveBack(List<KeyedPolicy> limits, List<Decision> decisions, boolean wait) {
		RateLimitStore.checkGiveBack(limits, decisions);
		List<Integer> taken = new ArrayList<>(limits.size());
		for (int i = 0; i < limits.size(); i++) {
			if (decisions.get(i).taken()) {
				taken.add(i);
			}
		}
		List<RedisLimiter> limiters = limiters(limits);
		CompletableFuture<Void> given = DONE;
		for (List<Integer> group : groups(limits, taken)) {
			given = given.thenCompose((none) -> giveBack(limits, limiters, decisions, group, wait));
		}
		return given.thenRun(() -> {
			for (KeyedPolicy limit : limits) {
				forget(limit.key());
			}
		});
	}

	/** Gives back the limits at {@code group}, in one call; one that fails leaves them taken. */
	private CompletableFuture<Void> giveBack(List<KeyedPolicy> limits, List<RedisLimiter> limiters,
			List<Decision> decisions, List<Integer> group, boolean wait) {
		return this.calls.giveBack(pick(clients(limits), group), pick(limiters, group), pick(decisions, group), wait)
			.handle((reply, ex) -> {
				if (ex != null) {
					giveBackFailed(limits, group, ScriptCaller.failure(ex));
				}
				return null;
			});
	}

	private void giveBackFailed(List<KeyedPolicy> limits, List<Integer> group, ScriptCaller.CallFailure failure) {
		this.failureLog.giveBackFailed(failure.getCause());
		try {
			this.listener.onGiveBackFailure(pick(policies(limits), group), failure.getCause());
		}
		catch (RuntimeException ex) {
			this.failureLog.listenerFailed(ex);
		}
	}

	/**
	 * {@inheritDoc}
	 * <p>
	 * Asks Redis, waiting at most the timeout, after carrying the key's permits over if its policy has just
	 * changed; the failure policy never answers it.
	 * @throws IllegalStateException if Redis did not answer
	 */
	@Override
	public Decision inspect(String key, RateLimitPolicy policy) {
		Objects.requireNonNull(key, "key must not be null");
		RedisLimiter limiter = (RedisLimiter) limiter(base(policy));
		String client = RedisKeys.escape(key);
		long sent = this.calls.now();
		try {
			ScriptCaller.done(carryOver(List.of(client), List.of(limiter), sent, true));
			Decision peeked = this.calls.decide(List.of(client), List.of(limiter), sent, true).get(0);
			// a peek replies as to a refused request: one of one permit would pass when it need not wait
			return new Decision(peeked.retryAfterNanos() == 0, peeked.limit(), peeked.remaining(),
					peeked.retryAfterNanos(), peeked.resetAfterNanos(), 0);
		}
		catch (ScriptCaller.CallFailure failure) {
			throw new IllegalStateException("Redis did not tell the state of key '" + key + "' under policy '"
					+ policy.name() + "': " + failure.getCause(), failure.getCause());
		}
	}

	/**
	 * {@inheritDoc}
	 * <p>
	 * Deletes the key's states in Redis, waiting at most the timeout, and forgets the denials this instance keeps
	 * for it; every decision that reaches Redis sees the reset at once. The reset is announced on the
	 * {@link #fleetChannel() fleet's channel}, for instances that subscribe to forget their denials of the key
	 * at once, and every other instance forgets all the denials it keeps at its next heartbeat, within about a
	 * second.
	 * @throws IllegalStateException if Redis did not delete them
	 */
	@Override
	public void reset(String key, RateLimitPolicy policy) {
		Objects.requireNonNull(key, "key must not be null");
		RedisLimiter limiter = (RedisLimiter) limiter(base(policy));
		try {
			this.calls.reset(RedisKeys.escape(key), limiter);
		}
		catch (ScriptCaller.CallFailure failure) {
			throw new IllegalStateException("Redis did not reset key '" + key + "' under policy '" + policy.name()
					+ "': " + failure.getCause(), failure.getCause());
		}
		forget(key);
		try {
			control(List.of("reset", this.keys.channel(), key));
		}
		catch (ScriptCaller.CallFailure failure) {
			this.failureLog.resetNotShared(failure.getCause());
		}
	}

	/**
	 * Shares a runtime change of a policy with every instance of the fleet, or removes it: the change stays in
	 * Redis, where instances that start later read it, until it is removed. Each instance learns of it at its
	 * next heartbeat, within about a second (an instance that subscribes to the {@link #fleetChannel() fleet's
	 * channel} hears of it at once), and tells its
	 * {@link #onSharedChanges listener}, which applies it. Waits for Redis at most the timeout.
	 * @param policy the name of the policy
	 * @param change its new values, or null to remove its change
	 * @throws IllegalStateException if Redis did not store it
	 */
	public void share(String policy, @Nullable SharedChange change) {
		Objects.requireNonNull(policy, "policy must not be null");
		try {
			control((change != null)
					? List.of("share", this.keys.channel(), policy, Long.toString(change.limit()),
							Long.toString(TimeUnit.NANOSECONDS.toMicros(change.window().toNanos())),
							Long.toString(change.burst()))
					: List.of("unshare", this.keys.channel(), policy));
		}
		catch (ScriptCaller.CallFailure failure) {
			throw new IllegalStateException("Redis did not store the change of policy '" + policy + "': "
					+ failure.getCause(), failure.getCause());
		}
	}

	/**
	 * Reads the runtime changes that the fleet shares for the given policies, waiting for Redis at most the
	 * timeout.
	 * @param policies the names of the policies
	 * @return the change of each policy that has one
	 * @throws IllegalStateException if Redis did not answer
	 */
	public Map<String, SharedChange> sharedChanges(Collection<String> policies) {
		List<String> names = List.copyOf(policies);
		List<String> args = new ArrayList<>(1 + names.size());
		args.add("read");
		args.addAll(names);
		List<Long> reply;
		try {
			reply = control(args);
		}
		catch (ScriptCaller.CallFailure failure) {
			throw new IllegalStateException("Redis did not tell the shared changes of the policies: "
					+ failure.getCause(), failure.getCause());
		}
		if (reply.size() != 2 + 4 * names.size()) {
			throw new IllegalStateException("Expected " + (2 + 4 * names.size())
					+ " integers from the control script, got " + reply);
		}
		Map<String, SharedChange> changes = new TreeMap<>();
		for (int i = 0; i < names.size(); i++) {
			int at = 2 + 4 * i;
			if (reply.get(at) == 1) {
				changes.put(names.get(i), new SharedChange(reply.get(at + 1),
						Duration.of(reply.get(at + 2), ChronoUnit.MICROS), reply.get(at + 3)));
			}
		}
		return changes;
	}

	/**
	 * Sets what runs, on the heartbeat's thread, whenever a heartbeat finds that the fleet's shared changes have
	 * changed, and at the first heartbeat that Redis answers: typically reading them with
	 * {@link #sharedChanges} and applying them with {@link #change}.
	 * @param listener what runs; must not throw
	 */
	public void onSharedChanges(Runnable listener) {
		this.sharedChangesListener = Objects.requireNonNull(listener, "listener must not be null");
	}

	/**
	 * Returns the Redis Pub/Sub channel on which every reset is announced as {@code reset:<client key>} and
	 * every shared change as {@code changes}. The heartbeat acts upon both within about a second; an application
	 * that subscribes can act at once: {@link #forget} the key, or read and apply the changes.
	 * @return the channel of this store's key prefix
	 */
	public String fleetChannel() {
		return this.keys.channel();
	}

	private List<Long> control(List<String> args) throws ScriptCaller.CallFailure {
		return this.caller.call(RedisScripts.get().control(), List.of(this.keys.control()), (deadline) -> args);
	}

	/**
	 * Returns whether the failure policy decides every request because Redis is failing, as opposed to Redis
	 * deciding (and the failure policy deciding only the requests that Redis did not answer in time).
	 * @return whether an outage is in effect
	 */
	public boolean isFailing() {
		return this.detector.failing() != null;
	}

	/**
	 * Returns the failure policy, since how long Redis has been failing, if it is, measured with the store's own
	 * clock, never Redis', and how many decisions the failure policy has made, in all and during the current
	 * outage.
	 * @return the status of the failure policy
	 */
	public FailureStatus failureStatus() {
		return this.detector.status(this.fallback.policy());
	}

	/**
	 * Returns how many instances share this store's quotas, as its last heartbeat counted them: 1 until a
	 * heartbeat has answered. Under {@link FailurePolicy#LOCAL} each enforces its share of every limit while
	 * Redis is away.
	 * @return the size of the fleet, at least 1
	 */
	public int fleetSize() {
		return this.fleet.size();
	}

	/** The limiters of the limits of one request, checked by {@link RateLimitStore#checkStack}. */
	private List<RedisLimiter> limiters(List<KeyedPolicy> limits) {
		List<RedisLimiter> limiters = new ArrayList<>(limits.size());
		for (KeyedPolicy limit : limits) {
			limiters.add((RedisLimiter) limiter(limit.policy()));
		}
		return limiters;
	}

	/** The key every limit is on, or null when they differ. */
	private static @Nullable String sharedKey(List<KeyedPolicy> limits) {
		String key = limits.get(0).key();
		for (KeyedPolicy limit : limits) {
			if (!limit.key().equals(key)) {
				return null;
			}
		}
		return key;
	}

	private static List<String> clients(List<KeyedPolicy> limits) {
		List<String> clients = new ArrayList<>(limits.size());
		for (KeyedPolicy limit : limits) {
			clients.add(RedisKeys.escape(limit.key()));
		}
		return clients;
	}

	private static List<RateLimitPolicy> policies(List<KeyedPolicy> limits) {
		List<RateLimitPolicy> policies = new ArrayList<>(limits.size());
		for (KeyedPolicy limit : limits) {
			policies.add(limit.policy());
		}
		return policies;
	}

	private static <T> List<T> pick(List<T> values, List<Integer> indexes) {
		List<T> picked = new ArrayList<>(indexes.size());
		for (int i : indexes) {
			picked.add(values.get(i));
		}
		return picked;
	}

	/**
	 * The limits at {@code indexes} in the groups that one script call may touch: all of them on a single
	 * Redis, else one group per Cluster slot, in the order of the slots.
	 */
	private List<List<Integer>> groups(List<KeyedPolicy> limits, List<Integer> indexes) {
		if (indexes.isEmpty()) {
			return List.of();
		}
		if (!this.cluster) {
			return List.of(indexes);
		}
		TreeMap<Integer, List<Integer>> bySlot = new TreeMap<>();
		for (int i : indexes) {
			bySlot.computeIfAbsent(RedisKeys.slot(RedisKeys.escape(limits.get(i).key())), (slot) -> new ArrayList<>())
				.add(i);
		}
		return new ArrayList<>(bySlot.values());
	}

	/**
	 * Decides one request under limits on several keys: one atomic call on a single Redis; on a Cluster, one
	 * atomic call per slot in the order of the slots, each taking only if it allows. When a slot denies, the
	 * slots before it are given their permits back, and every other slot is asked what it would answer without
	 * taking; a slot that cannot be asked reports no permits left and no wait of its own, and the request stays
	 * denied. When a call fails after earlier slots took, the failure policy decides the whole request; if it
	 * denies, the earlier slots are given their permits back. A give-back that fails leaves them taken:
	 * stricter, never more lenient. Each call is waited for if {@code wait}, else sent once the one before it
	 * has been answered, from the thread that completed it.
	 */
	private CompletableFuture<List<Decision>> decideAcross(List<KeyedPolicy> limits, List<RedisLimiter> limiters,
			boolean wait) {
		startHeartbeat(0);
		Across across = new Across(limits, limiters, wait);
		OutageDetector.Route route = this.detector.route();
		boolean handedOver = false;
		try {
			ScriptCaller.CallFailure outage = outage(route);
			if (outage != null) {
				return CompletableFuture.completedFuture(fallBack(limits, outage));
			}
			long sent = this.calls.now();
			CompletableFuture<List<Decision>> decided = carryOver(across.clients, limiters, sent, wait)
				.thenCompose((none) -> across.take(0, sent))
				.handle((denied, ex) -> {
					try {
						if (ex != null) {
							return across.failed(failed(limits, ScriptCaller.failure(ex)));
						}
						if (this.detector.succeeded()) {
							this.failureLog.recovered();
						}
					}
					finally {
						this.detector.done(route);
					}
					return (denied >= 0) ? across.denied(denied)
							: CompletableFuture.completedFuture(across.decisions());
				})
				.thenCompose(Function.identity());
			handedOver = true;
			return decided;
		}
		finally {
			if (!handedOver) {
				this.detector.done(route);
			}
		}
	}

	/**
	 * One request decided slot by slot, by {@link #decideAcross}: the decisions and the permits each slot holds,
	 * filled in by one call after another.
	 */
	private final class Across {

		final List<KeyedPolicy> limits;

		final List<RedisLimiter> limiters;

		final List<String> clients;

		final List<List<Integer>> groups;

		private final Decision[] decisions;

		private final boolean[] holding;

		private final boolean wait;

		Across(List<KeyedPolicy> limits, List<RedisLimiter> limiters, boolean wait) {
			this.limits = limits;
			this.limiters = limiters;
			this.clients = clients(limits);
			List<Integer> all = new ArrayList<>(limits.size());
			for (int i = 0; i < limits.size(); i++) {
				all.add(i);
			}
			this.groups = groups(limits, all);
			this.decisions = new Decision[limits.size()];
			this.holding = new boolean[this.groups.size()];
			this.wait = wait;
		}

		/** Takes from {@code group} and the groups after it until one denies; completes with that one, or -1. */
		CompletableFuture<Integer> take(int group, long sent) {
			if (group == this.groups.size()) {
				return CompletableFuture.completedFuture(-1);
			}
			return decide(group, sent, false).thenCompose((first) -> {
				this.holding[group] = first.taken();
				return first.allowed() ? take(group + 1, sent) : CompletableFuture.completedFuture(group);
			});
		}

		/** Decides the limits of {@code group} in one call into the decisions, and completes with the first. */
		private CompletableFuture<Decision> decide(int group, long sent, boolean peek) {
			List<Integer> indexes = this.groups.get(group);
			return RedisRateLimitStore.this.calls
				.decide(pick(this.clients, indexes), pick(this.limiters, indexes), sent, peek, this.wait)
				.thenApply((reply) -> {
					for (int k = 0; k < indexes.size(); k++) {
						this.decisions[indexes.get(k)] = reply.get(k);
					}
					return reply.get(0);
				});
		}

		/** A request that {@code denied} denied: what the others took goes back, and they are asked instead. */
		CompletableFuture<List<Decision>> denied(int denied) {
			CompletableFuture<Void> asked = giveBackHeld();
			for (int group = 0; group < this.groups.size(); group++) {
				if (group != denied) {
					int other = group;
					asked = asked.thenCompose((none) -> peek(other));
				}
			}
			return asked.thenApply((none) -> decisions());
		}

		/** A call that failed, after which the failure policy {@code decided}: what it denied goes back. */
		CompletableFuture<List<Decision>> failed(List<Decision> decided) {
			if (decided.get(0).allowed()) {
				return CompletableFuture.completedFuture(decided);
			}
			return giveBackHeld().thenApply((none) -> decided);
		}

		/** What the limits of {@code group} answer to a request another limit denied, without taking. */
		private CompletableFuture<Void> peek(int group) {
			return decide(group, RedisRateLimitStore.this.calls.now(), true).handle((first, ex) -> {
				if (ex != null) {
					ScriptCaller.CallFailure failure = ScriptCaller.failure(ex);
					if (RedisRateLimitStore.this.detector.failed(failure)) {
						RedisRateLimitStore.this.failureLog.outageBegan(failure.getCause());
					}
					for (int i : this.groups.get(group)) {
						RateLimitPolicy policy = this.limiters.get(i).policy();
						this.decisions[i] = new Decision(false, policy.limit(), 0, 0, policy.window().toNanos(), 0);
					}
				}
				return null;
			});
		}

		/** Gives back what the groups still holding permits took, once each. */
		private CompletableFuture<Void> giveBackHeld() {
			CompletableFuture<Void> given = DONE;
			List<Decision> taken = Arrays.asList(this.decisions);
			for (int group = 0; group < this.groups.size(); group++) {
				if (this.holding[group]) {
					this.holding[group] = false;
					List<Integer> indexes = this.groups.get(group);
					given = given
						.thenCompose((none) -> giveBack(this.limits, this.limiters, taken, indexes, this.wait));
				}
			}
			return given;
		}

		List<Decision> decisions() {
			return Arrays.asList(this.decisions);
		}

	}

	/**
	 * Decides one request under the given policies, waiting for Redis: a denial of Redis still in force, one
	 * script call, or the failure policy.
	 */
	List<Decision> decide(String key, List<RedisLimiter> limiters) {
		startHeartbeat(0);
		long sent = this.calls.now();
		long epoch = denialsEpoch();
		List<Decision> denied = keptDenial(key, limiters, sent);
		if (denied != null) {
			return denied;
		}
		OutageDetector.Route route = this.detector.route();
		try {
			ScriptCaller.CallFailure outage = outage(route);
			if (outage != null) {
				return fallBack(keyed(key, limiters), outage);
			}
			List<String> clients = Collections.nCopies(limiters.size(), RedisKeys.escape(key));
			ScriptCaller.done(carryOver(clients, limiters, sent, true));
			return replied(key, limiters, this.calls.decide(clients, limiters, sent, false), sent, epoch);
		}
		catch (ScriptCaller.CallFailure failure) {
			return failed(keyed(key, limiters), failure);
		}
		finally {
			this.detector.done(route);
		}
	}

	/**
	 * Decides one request under the given policies as {@link #decide(String, List)} does, with the same steps,
	 * without waiting for Redis.
	 */
	private CompletableFuture<List<Decision>> decideAsync(String key, List<RedisLimiter> limiters) {
		startHeartbeat(0);
		long sent = this.calls.now();
		long epoch = denialsEpoch();
		List<Decision> denied = keptDenial(key, limiters, sent);
		if (denied != null) {
			return CompletableFuture.completedFuture(denied);
		}
		OutageDetector.Route route = this.detector.route();
		boolean handedOver = false;
		try {
			ScriptCaller.CallFailure outage = outage(route);
			if (outage != null) {
				return CompletableFuture.completedFuture(fallBack(keyed(key, limiters), outage));
			}
			List<String> clients = Collections.nCopies(limiters.size(), RedisKeys.escape(key));
			CompletableFuture<List<Decision>> decided = carryOver(clients, limiters, sent, false)
				.thenCompose((none) -> this.calls.decide(clients, limiters, sent, false, false))
				.handle((decisions, ex) -> {
					try {
						return (ex == null) ? replied(key, limiters, decisions, sent, epoch)
								: failed(keyed(key, limiters), ScriptCaller.failure(ex));
					}
					finally {
						this.detector.done(route);
					}
				});
			handedOver = true;
			return decided;
		}
		finally {
			if (!handedOver) {
				this.detector.done(route);
			}
		}
	}

	/** How many times a key's denials were forgotten so far, read before the call that may be kept. */
	private long denialsEpoch() {
		LocalDenials denials = this.denials;
		return (denials != null) ? denials.epoch() : 0;
	}

	/** Redis' denial of the same request still in force, if kept: Redis would answer it again. */
	private @Nullable List<Decision> keptDenial(String key, List<RedisLimiter> limiters, long sent) {
		LocalDenials denials = this.denials;
		return (denials != null) ? denials.find(key, limiters, sent) : null;
	}

	/** The outage that sends a decision on {@code route} straight to the failure policy, or null. */
	private ScriptCaller.@Nullable CallFailure outage(OutageDetector.Route route) {
		return (route == OutageDetector.Route.FAILURE_POLICY) ? this.detector.failing() : null;
	}

	/** Redis decided a request of one key: an outage ends, and a denial is kept. */
	private List<Decision> replied(String key, List<RedisLimiter> limiters, List<Decision> decisions, long sent,
			long epoch) {
		if (this.detector.succeeded()) {
			this.failureLog.recovered();
		}
		LocalDenials denials = this.denials;
		if (denials != null) {
			denials.keep(key, limiters, decisions, sent, epoch, this.calls.now());
		}
		return decisions;
	}

	/** Redis did not decide a request: the failure counts towards an outage, and the failure policy decides. */
	private List<Decision> failed(List<KeyedPolicy> limits, ScriptCaller.CallFailure failure) {
		if (this.detector.failed(failure)) {
			this.failureLog.outageBegan(failure.getCause());
		}
		return fallBack(limits, failure);
	}

	/**
	 * Carries each client's permits over to its limiter's policy from the ones it changed from, while any of
	 * them still counts: one more call per such limiter, one after another, until then; none afterwards. Each
	 * call is waited for if {@code wait}.
	 */
	private CompletableFuture<?> carryOver(List<String> clients, List<RedisLimiter> limiters, long sent,
			boolean wait) {
		CompletableFuture<?> carried = DONE;
		for (int i = 0; i < limiters.size(); i++) {
			RedisLimiter limiter = limiters.get(i);
			List<RedisLimiter.Predecessor> predecessors = limiter.predecessors;
			if (predecessors.isEmpty()) {
				continue;
			}
			List<RedisLimiter.Predecessor> live = new ArrayList<>(predecessors.size());
			for (RedisLimiter.Predecessor predecessor : predecessors) {
				if (predecessor.untilNanos() - sent > 0) {
					live.add(predecessor);
				}
			}
			if (!live.isEmpty()) {
				String client = clients.get(i);
				carried = carried.thenCompose((none) -> this.calls.carryOver(client, limiter, live, sent, wait));
			}
		}
		return carried;
	}

	private static List<KeyedPolicy> keyed(String key, List<RedisLimiter> limiters) {
		List<KeyedPolicy> limits = new ArrayList<>(limiters.size());
		for (RedisLimiter limiter : limiters) {
			limits.add(new KeyedPolicy(key, limiter.policy()));
		}
		return limits;
	}

	/**
	 * Forgets the denials of {@code key} that this instance keeps under every policy, so that its next request
	 * is decided by Redis again: to be called once the key's state in Redis has been reset. Other instances
	 * keep theirs until the retry-after that Redis gave them has passed.
	 * @param key the client key, as given to the limiters
	 */
	public void forget(String key) {
		Objects.requireNonNull(key, "key must not be null");
		if (this.denials != null) {
			this.denials.forget(key);
		}
	}

	/**
	 * Runs, once each, the scripts that the given policies use, on a key that no client key is written as, so
	 * that the connection is open and Redis has compiled the scripts before the first request: that request
	 * would otherwise pay for both, which can take longer than the timeout. It also sends the first heartbeat,
	 * so that the store knows its fleet before the first request. The key it writes expires like any other,
	 * and no client's state changes. It neither calls the failure listener nor applies the failure policy.
	 * @param stacks the policies of each endpoint, decided together when there are several
	 * @return completes once Redis has run every script, exceptionally when one call failed
	 */
	public CompletableFuture<Void> warmUp(Collection<List<RateLimitPolicy>> stacks) {
		Map<String, CompletableFuture<?>> calls = new HashMap<>();
		for (List<RateLimitPolicy> stack : stacks) {
			List<KeyedPolicy> limits = new ArrayList<>(stack.size());
			stack.forEach((policy) -> limits.add(new KeyedPolicy(RedisKeys.WARM_UP_CLIENT, policy)));
			RateLimitStore.checkStack(limits);
			List<RedisLimiter> limiters = limiters(limits);
			calls.computeIfAbsent(this.calls.script(limiters).sha1(), (sha1) -> this.calls.warmUp(limiters));
		}
		calls.put(RedisScripts.get().fleet().sha1(), this.fleet.sendHeartbeat().thenRun(() -> {
			try {
				this.scheduler.execute(this::followFleet);
			}
			catch (RejectedExecutionException ex) {
				// the store is closing
			}
		}));
		startHeartbeat(Fleet.HEARTBEAT.toNanos());
		return CompletableFuture.allOf(calls.values().toArray(CompletableFuture[]::new));
	}

	private List<Decision> fallBack(List<KeyedPolicy> limits, ScriptCaller.CallFailure failure) {
		this.failureLog.failed(failure.kind, failure.getCause());
		this.detector.failurePolicyDecided();
		try {
			this.listener.onFailure(policies(limits), failure.getCause());
		}
		catch (RuntimeException ex) {
			this.failureLog.listenerFailed(ex);
		}
		return this.fallback.decide(limits);
	}

	private void startHeartbeat(long delayNanos) {
		if (!this.heartbeatStarted.get() && this.heartbeatStarted.compareAndSet(false, true)) {
			scheduleHeartbeat(delayNanos);
		}
	}

	private void scheduleHeartbeat(long delayNanos) {
		if (this.closed) {
			return;
		}
		try {
			this.nextHeartbeat = this.scheduler.schedule(this::heartbeat, delayNanos, TimeUnit.NANOSECONDS);
		}
		catch (RejectedExecutionException ex) {
			// the scheduler is shutting down with the application
		}
	}

	private void heartbeat() {
		try {
			this.fleet.heartbeat();
			if (this.detector.succeeded()) {
				this.failureLog.recovered();
			}
			followFleet();
		}
		catch (ScriptCaller.CallFailure failure) {
			if (this.detector.failed(failure)) {
				this.failureLog.outageBegan(failure.getCause());
			}
		}
		finally {
			scheduleHeartbeat(Fleet.HEARTBEAT.toNanos());
		}
	}

	/**
	 * Acts upon what the last heartbeat counted: forgets every local denial once a client was reset anywhere,
	 * and tells the listener once the shared changes have changed.
	 */
	private synchronized void followFleet() {
		long resets = this.fleet.resets();
		if (resets != this.resetsSeen && resets >= 0) {
			this.resetsSeen = resets;
			if (this.denials != null) {
				this.denials.forgetAll();
			}
		}
		long changes = this.fleet.changes();
		if (changes != this.changesSeen && changes >= 0) {
			this.changesSeen = changes;
			try {
				this.sharedChangesListener.run();
			}
			catch (RuntimeException ex) {
				this.failureLog.listenerFailed(ex);
			}
		}
	}

	/**
	 * Stops the heartbeat and leaves the fleet, waiting for Redis at most the timeout, so that the other
	 * instances count this one out at once, and writes the log lines still queued. Decisions made after closing
	 * still work, without a heartbeat, and log on the thread that failed.
	 */
	@Override
	public void close() {
		this.closed = true;
		ScheduledFuture<?> next = this.nextHeartbeat;
		if (next != null) {
			next.cancel(false);
		}
		if (this.heartbeatStarted.get()) {
			try {
				this.fleet.leave();
			}
			catch (ScriptCaller.CallFailure failure) {
				// its membership expires by itself within three heartbeats
			}
		}
		if (this.ownScheduler) {
			this.scheduler.shutdown();
			try {
				// a heartbeat under way, or log lines still to write
				this.scheduler.awaitTermination(this.caller.timeoutNanos() + CLOSE_GRACE_NANOS, TimeUnit.NANOSECONDS);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		}
	}

	/**
	 * The values a runtime change gives a policy, which every instance of the fleet applies.
	 *
	 * @param limit the limit
	 * @param window the window
	 * @param burst the burst, the limit for the window algorithms
	 */
	public record SharedChange(long limit, Duration window, long burst) {

		/**
		 * Creates the values of a change.
		 * @param limit the limit
		 * @param window the window, a whole number of microseconds
		 * @param burst the burst
		 */
		public SharedChange {
			Objects.requireNonNull(window, "window must not be null");
		}

		/**
		 * Returns the values of {@code policy}.
		 * @param policy the policy
		 * @return its limit, window and burst
		 */
		public static SharedChange of(RateLimitPolicy policy) {
			return new SharedChange(policy.limit(), policy.window(), policy.burst());
		}

	}

	/** The policy a changed policy is now, at one permit, and the ones it changed from, newest first. */
	private record Transition(RateLimitPolicy policy, List<RedisLimiter.Predecessor> predecessors) {
	}

	/**
	 * Told of every decision that the {@link FailurePolicy} made because Redis did not.
	 */
	@FunctionalInterface
	public interface FailureListener {

		/**
		 * Called once per decision made without Redis, on the thread that asked for it, or for an
		 * {@link RedisRateLimitStore#decideAllAsync asynchronous} decision on the thread that completes it; must
		 * be quick, must not block and must not throw.
		 * @param policies the policies of the decision
		 * @param cause why Redis did not decide: a {@link TimeoutException}, a {@link ScriptNotSentException},
		 * the Redis client's exception, or the last such failure while Redis is known to be failing
		 */
		void onFailure(List<RateLimitPolicy> policies, Throwable cause);

		/**
		 * Called once per {@link RedisRateLimitStore#giveBack give-back} that Redis did not carry out, whose
		 * permits stay taken, on the thread that gave back, or for an
		 * {@link RedisRateLimitStore#giveBackAsync asynchronous} give-back on the thread that completes it;
		 * must be quick, must not block and must not throw. Does nothing by default.
		 * @param policies the policies whose permits stay taken
		 * @param cause why Redis did not take them back
		 */
		default void onGiveBackFailure(List<RateLimitPolicy> policies, Throwable cause) {
		}

	}

	/**
	 * Builds a {@link RedisRateLimitStore}.
	 */
	public static final class Builder {

		private final RedisScriptExecutor executor;

		private RedisKeys keys = new RedisKeys("ratelimit:");

		private @Nullable TimeSource timeSource;

		private Duration timeout = Duration.ofMillis(100);

		private FailurePolicy failurePolicy = FailurePolicy.LOCAL;

		private @Nullable RateLimitStore fallback;

		private FailureListener listener = (policies, cause) -> {
		};

		private @Nullable ScheduledExecutorService scheduler;

		private boolean localDenials = true;

		private boolean cluster;

		/** Real time, for the timeout's deadline, the spans of failures and the log's periods. */
		private TimeSource ticker = TimeSource.system();

		/** What gives up on an asynchronous call after the timeout. */
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
		 * Sets how long a decision waits for Redis before the failure policy decides instead.
		 * @param timeout the timeout, positive
		 * @return this builder
		 */
		public Builder timeout(Duration timeout) {
			Objects.requireNonNull(timeout, "timeout must not be null");
			if (timeout.isNegative() || timeout.isZero()) {
				throw new IllegalArgumentException("timeout must be positive, was " + timeout);
			}
			this.timeout = timeout;
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
		 * Sets who is told of every decision made without Redis, for instance to count them.
		 * @param listener the listener
		 * @return this builder
		 */
		public Builder onFailure(FailureListener listener) {
			this.listener = Objects.requireNonNull(listener, "listener must not be null");
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
		 * Redis' own denials are kept, never an admission or a failure policy's decision; see
		 * {@link RedisRateLimitStore#forget(String)} for a reset.
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
