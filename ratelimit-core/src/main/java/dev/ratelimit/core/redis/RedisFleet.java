package dev.ratelimit.core.redis;

import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import org.jspecify.annotations.Nullable;

import dev.ratelimit.core.RateLimitStore;
import dev.ratelimit.core.internal.FailureKind;

/**
 * This instance's membership in the fleet that shares the store's Redis and key prefix, and what the fleet
 * shares besides the clients' states. A heartbeat about once a {@link #HEARTBEAT period}, from the first
 * decision or warm-up on, tells Redis that the instance is there and tells the instance how many share the
 * quotas, what Redis' clock reads, and how many runtime changes and resets the fleet has counted: once a client
 * was reset anywhere, the instance forgets every denial it keeps, and once the shared changes have changed, it
 * tells their listener. A member that misses three heartbeats no longer counts. While Redis is away the count
 * keeps its last value, and an instance that never reached Redis counts itself alone.
 * <p>
 * The control script keeps the shared changes and counts the resets, and announces both on the fleet's
 * channel, as {@value #CHANGES_MESSAGE} and {@value #RESET_MESSAGE}{@code <client key>}, for instances that
 * subscribe to act at once rather than at their next heartbeat.
 */
final class RedisFleet implements RateLimitStore.Fleet, RateLimitStore.SharedChanges {

	static final Duration HEARTBEAT = Duration.ofSeconds(1);

	/** What the control script announces on the channel when a client was reset, followed by its key. */
	static final String RESET_MESSAGE = "reset:";

	/** What the control script announces on the channel when the shared changes changed. */
	static final String CHANGES_MESSAGE = "changes";

	private static final String MEMBER_TTL_MILLIS = Long.toString(3 * HEARTBEAT.toMillis());

	private static final long CLOSE_GRACE_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

	private final ScriptCaller caller;

	private final RedisKeys keys;

	private final List<String> fleetKeys;

	private final StoreFailures failures;

	private final @Nullable LocalDenials denials;

	private final ScheduledExecutorService scheduler;

	private final boolean ownScheduler;

	private final String id = UUID.randomUUID().toString();

	private final List<String> join = List.of(this.id, MEMBER_TTL_MILLIS, "");

	private final AtomicBoolean started = new AtomicBoolean();

	private volatile boolean closed;

	private volatile @Nullable ScheduledFuture<?> nextHeartbeat;

	private volatile Runnable changesListener = () -> {
	};

	private volatile int size = 1;

	private volatile long changes = -1;

	private volatile long resets = -1;

	/** When the shared changes in Redis were first written, 0 when there are none, -1 before the first heartbeat. */
	private volatile long since = -1;

	/** The fleet's counts of changes and resets that this instance has acted upon. */
	private long changesSeen = -1;

	private long resetsSeen = -1;

	/** When the shared changes this instance knows were first written in Redis, 0 if it knows of none. */
	private volatile long sinceKnown;

	/** The shared changes this instance knows, by policy, which it writes back should Redis lose them. */
	private final Map<String, RateLimitStore.SharedChange> known = new ConcurrentHashMap<>();

	/**
	 * Creates the fleet of a store, whose heartbeat runs on {@code scheduler}, which {@link #close()} shuts down
	 * if it is the store's own.
	 */
	RedisFleet(ScriptCaller caller, RedisKeys keys, StoreFailures failures, @Nullable LocalDenials denials,
			ScheduledExecutorService scheduler, boolean ownScheduler) {
		this.caller = caller;
		this.keys = keys;
		this.fleetKeys = List.of(keys.fleet(), keys.control());
		this.failures = failures;
		this.denials = denials;
		this.scheduler = scheduler;
		this.ownScheduler = ownScheduler;
	}

	/** One daemon thread for the heartbeat and the log; what is queued when the store closes is still written. */
	static ScheduledExecutorService ownScheduler() {
		ScheduledThreadPoolExecutor scheduler = new ScheduledThreadPoolExecutor(1, (task) -> {
			Thread thread = new Thread(task, "ratelimit-redis-heartbeat");
			thread.setDaemon(true);
			return thread;
		});
		scheduler.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
		return scheduler;
	}

	@Override
	public int size() {
		return this.size;
	}

	/** Starts the heartbeat, once: the first decision sends the first one at once. */
	void start() {
		start(0);
	}

	private void start(long delayNanos) {
		if (!this.started.get() && this.started.compareAndSet(false, true)) {
			schedule(delayNanos);
		}
	}

	/**
	 * Sends the first heartbeat without waiting for it, and acts upon its reply, so that the store knows its fleet
	 * before the first request; the next heartbeats follow about once a period.
	 */
	CompletableFuture<Void> warmUp() {
		CompletableFuture<Void> sent = this.caller.send(RedisScripts.get().fleet(), this.fleetKeys, this.join)
			.thenAccept((reply) -> accept(reply, this.caller.clock().nanoTime()))
			.thenRun(() -> {
				try {
					this.scheduler.execute(this::follow);
				}
				catch (RejectedExecutionException ex) {
					// the store is closing
				}
			});
		start(HEARTBEAT.toNanos());
		return sent;
	}

	private void schedule(long delayNanos) {
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
			List<Long> reply = this.caller.call(RedisScripts.get().fleet(), this.fleetKeys, (deadline) -> this.join);
			try {
				accept(reply, this.caller.clock().nanoTime());
			}
			catch (IllegalStateException ex) {
				throw new ScriptCaller.CallFailure(FailureKind.ERROR, ex, this.caller.clock().nanoTime(),
						this.caller.partition(this.fleetKeys));
			}
			follow();
		}
		catch (ScriptCaller.CallFailure failure) {
			this.failures.unanswered(failure);
		}
		finally {
			schedule(HEARTBEAT.toNanos());
		}
	}

	private void accept(List<Long> reply, long received) {
		if (reply.size() != 6) {
			throw new IllegalStateException("Expected 6 integers from the fleet script, got " + reply);
		}
		this.size = (int) Math.max(1, Math.min(Integer.MAX_VALUE, reply.get(0)));
		this.caller.clock().observe(reply.get(1) * 1_000_000 + reply.get(2), received);
		this.changes = reply.get(3);
		this.resets = reply.get(4);
		this.since = reply.get(5);
	}

	/**
	 * Acts upon what the last heartbeat counted: forgets every local denial once a client was reset anywhere,
	 * writes back the shared changes this instance knows if Redis lost them, and then tells the listener once
	 * the shared changes have changed, never while they are lost.
	 */
	private synchronized void follow() {
		long resets = this.resets;
		if (resets != this.resetsSeen && resets >= 0) {
			this.resetsSeen = resets;
			if (this.denials != null) {
				this.denials.forgetAll();
			}
		}
		long changes = this.changes;
		if (kept() && changes != this.changesSeen && changes >= 0) {
			this.changesSeen = changes;
			changed();
		}
	}

	/**
	 * Whether the shared changes in Redis are those this instance knows, or follow from them: if the ones it
	 * knew are gone (an empty restart, a flush, an eviction, a failover to a replica that missed them), it writes
	 * back those it knows first, or adds those missing when another instance wrote them back first.
	 */
	private boolean kept() {
		long since = this.since;
		if (!gone(since)) {
			return true;
		}
		try {
			restore(this.sinceKnown);
			return true;
		}
		catch (ScriptCaller.CallFailure failure) {
			this.failures.changesRestored(new TreeMap<>(this.known).keySet(), 0, failure.getCause());
			return false;
		}
	}

	/**
	 * Whether the shared changes this instance knows are gone from Redis, where those first written at
	 * {@code since} are (0 for none, -1 when not known yet); if not, they are the ones it knows from now on.
	 */
	private boolean gone(long since) {
		long known = this.sinceKnown;
		if (since < 0 || known == 0 || since == known || this.known.isEmpty()) {
			if (since >= 0 && (since > 0 || this.known.isEmpty())) {
				this.sinceKnown = since;
			}
			return false;
		}
		return true;
	}

	/**
	 * Writes back the changes this instance knows, once the shared changes first written at {@code lost} are gone
	 * from Redis, unless newer ones replaced them.
	 */
	private synchronized void restore(long lost) throws ScriptCaller.CallFailure {
		Map<String, RateLimitStore.SharedChange> known = new TreeMap<>(this.known);
		List<String> args = new ArrayList<>(3 + 4 * known.size());
		args.addAll(List.of("restore", this.keys.channel(), Long.toString(lost)));
		known.forEach((policy, change) -> args.addAll(List.of(policy, Long.toString(change.limit()),
				Long.toString(TimeUnit.NANOSECONDS.toMicros(change.window().toNanos())),
				Long.toString(change.burst()))));
		List<Long> reply = control(args, 1);
		this.sinceKnown = reply.get(2);
		this.since = reply.get(2);
		if (reply.get(3) != 0) {
			this.failures.changesRestored(known.keySet(), reply.get(3), null);
		}
	}

	private void changed() {
		try {
			this.changesListener.run();
		}
		catch (RuntimeException ex) {
			this.failures.listenerFailed(ex);
		}
	}

	/** Acts upon a message of the fleet's channel: forgets the denials of a key reset elsewhere, or a change. */
	void receive(String message) {
		if (message.startsWith(RESET_MESSAGE)) {
			if (this.denials != null) {
				this.denials.forget(message.substring(RESET_MESSAGE.length()));
			}
		}
		else if (message.equals(CHANGES_MESSAGE)) {
			changed();
		}
	}

	String channel() {
		return this.keys.channel();
	}

	/**
	 * {@inheritDoc}
	 * <p>
	 * The change stays in Redis, where instances that start later read it, until it is removed. Each instance
	 * learns of it at its next heartbeat, within about a second, or at once when it subscribes to the fleet's
	 * channel. Waits for Redis at most the timeout.
	 */
	@Override
	public void share(String policy, RateLimitStore.@Nullable SharedChange change) {
		Objects.requireNonNull(policy, "policy must not be null");
		try {
			try {
				change(policy, change);
			}
			catch (ScriptCaller.CallFailure failure) {
				if (!lost(failure)) {
					throw failure;
				}
				restore(this.sinceKnown);
				change(policy, change);
			}
		}
		catch (ScriptCaller.CallFailure failure) {
			throw new IllegalStateException("Redis did not store the change of policy '" + policy + "': "
					+ failure.getCause(), failure.getCause());
		}
	}

	private void change(String policy, RateLimitStore.@Nullable SharedChange change) throws ScriptCaller.CallFailure {
		String since = Long.toString(this.sinceKnown);
		List<Long> reply = control((change != null)
				? List.of("share", this.keys.channel(), since, policy, Long.toString(change.limit()),
						Long.toString(TimeUnit.NANOSECONDS.toMicros(change.window().toNanos())),
						Long.toString(change.burst()))
				: List.of("unshare", this.keys.channel(), since, policy), 0);
		if (gone(reply.get(2))) {
			restore(this.sinceKnown);
		}
		if (change != null) {
			this.known.put(policy, change);
		}
		else {
			this.known.remove(policy);
		}
	}

	/** Whether the control script refused a change because the shared changes this instance knew are gone. */
	private static boolean lost(ScriptCaller.CallFailure failure) {
		return failure.kind == FailureKind.LOST;
	}

	/**
	 * {@inheritDoc}
	 * <p>
	 * Waits for Redis at most the timeout.
	 */
	@Override
	public Map<String, RateLimitStore.SharedChange> read(Collection<String> policies) {
		List<String> names = List.copyOf(policies);
		List<String> args = new ArrayList<>(1 + names.size());
		args.add("read");
		args.addAll(names);
		List<Long> reply;
		try {
			reply = control(args, 4 * names.size());
			if (gone(reply.get(2))) {
				restore(this.sinceKnown);
				reply = control(args, 4 * names.size());
			}
		}
		catch (ScriptCaller.CallFailure failure) {
			throw new IllegalStateException("Redis did not tell the shared changes of the policies: "
					+ failure.getCause(), failure.getCause());
		}
		Map<String, RateLimitStore.SharedChange> changes = new TreeMap<>();
		for (int i = 0; i < names.size(); i++) {
			int at = 3 + 4 * i;
			String name = names.get(i);
			if (reply.get(at) == 1) {
				RateLimitStore.SharedChange change = new RateLimitStore.SharedChange(reply.get(at + 1),
						Duration.of(reply.get(at + 2), ChronoUnit.MICROS), reply.get(at + 3));
				changes.put(name, change);
				this.known.put(name, change);
			}
			else {
				this.known.remove(name);
			}
		}
		return changes;
	}

	/**
	 * {@inheritDoc}
	 * <p>
	 * The listener runs on the heartbeat's thread whenever a heartbeat finds that the shared changes have
	 * changed, at the first heartbeat that Redis answers, and on the thread that {@link #receive receives} a
	 * change announced on the channel.
	 */
	@Override
	public void onChange(Runnable listener) {
		this.changesListener = Objects.requireNonNull(listener, "listener must not be null");
	}

	/** Counts a reset of {@code key} for the other instances and announces it on the channel. */
	void announceReset(String key) {
		try {
			control(List.of("reset", this.keys.channel(), key), 0);
		}
		catch (ScriptCaller.CallFailure failure) {
			this.failures.resetNotShared(failure.getCause());
		}
	}

	/**
	 * Counts a reset of every client for the other instances, which forget every denial they keep at their next
	 * heartbeat; it is announced on the channel as a reset of the empty key.
	 */
	void announceResetAll() {
		announceReset("");
	}

	/**
	 * Calls the control script, whose reply holds the counts of changes and resets, when the shared changes were
	 * first written, and {@code more} integers.
	 */
	private List<Long> control(List<String> args, int more) throws ScriptCaller.CallFailure {
		List<Long> reply = this.caller.call(RedisScripts.get().control(), List.of(this.keys.control()),
				(deadline) -> args);
		if (reply.size() != 3 + more) {
			throw new ScriptCaller.CallFailure(FailureKind.ERROR, new IllegalStateException(
					"Expected " + (3 + more) + " integers from the control script, got " + reply),
					this.caller.clock().nanoTime(), this.caller.partition(List.of(this.keys.control())));
		}
		return reply;
	}

	/**
	 * Stops the heartbeat and leaves the fleet, waiting for Redis at most the maximum wait, so that the other
	 * instances count this one out at once rather than after its last heartbeat expires; then shuts the store's
	 * own scheduler down, once a heartbeat under way and the log lines still queued are done, waiting at most the
	 * maximum wait again and a tenth of a second.
	 */
	void close() {
		this.closed = true;
		ScheduledFuture<?> next = this.nextHeartbeat;
		if (next != null) {
			next.cancel(false);
		}
		if (this.started.get()) {
			try {
				this.caller.call(RedisScripts.get().fleet(), this.fleetKeys,
						(deadline) -> List.of(this.id, MEMBER_TTL_MILLIS, "leave"));
			}
			catch (ScriptCaller.CallFailure failure) {
				// its membership expires by itself within three heartbeats
			}
		}
		if (this.ownScheduler) {
			this.scheduler.shutdown();
			try {
				// a heartbeat under way, or log lines still to write
				this.scheduler.awaitTermination(this.caller.maxWaitNanos() + CLOSE_GRACE_NANOS, TimeUnit.NANOSECONDS);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		}
	}

}
