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
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import org.jspecify.annotations.Nullable;

import dev.ratelimit.core.RateLimitStore;

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

	/** The fleet's counts of changes and resets that this instance has acted upon. */
	private long changesSeen = -1;

	private long resetsSeen = -1;

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
				throw new ScriptCaller.CallFailure(ScriptCaller.Kind.ERROR, ex, this.caller.clock().nanoTime());
			}
			this.failures.answered();
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
		if (reply.size() != 5) {
			throw new IllegalStateException("Expected 5 integers from the fleet script, got " + reply);
		}
		this.size = (int) Math.max(1, Math.min(Integer.MAX_VALUE, reply.get(0)));
		this.caller.clock().observe(reply.get(1) * 1_000_000 + reply.get(2), received);
		this.changes = reply.get(3);
		this.resets = reply.get(4);
	}

	/**
	 * Acts upon what the last heartbeat counted: forgets every local denial once a client was reset anywhere,
	 * and tells the listener once the shared changes have changed.
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
		if (changes != this.changesSeen && changes >= 0) {
			this.changesSeen = changes;
			changed();
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
		Map<String, RateLimitStore.SharedChange> changes = new TreeMap<>();
		for (int i = 0; i < names.size(); i++) {
			int at = 2 + 4 * i;
			if (reply.get(at) == 1) {
				changes.put(names.get(i), new RateLimitStore.SharedChange(reply.get(at + 1),
						Duration.of(reply.get(at + 2), ChronoUnit.MICROS), reply.get(at + 3)));
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
			control(List.of("reset", this.keys.channel(), key));
		}
		catch (ScriptCaller.CallFailure failure) {
			this.failures.resetNotShared(failure.getCause());
		}
	}

	private List<Long> control(List<String> args) throws ScriptCaller.CallFailure {
		return this.caller.call(RedisScripts.get().control(), List.of(this.keys.control()), (deadline) -> args);
	}

	/**
	 * Stops the heartbeat and leaves the fleet, waiting for Redis at most the timeout, so that the other
	 * instances count this one out at once rather than after its last heartbeat expires; then shuts the store's
	 * own scheduler down, once the log lines still queued are written.
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
				this.scheduler.awaitTermination(this.caller.timeoutNanos() + CLOSE_GRACE_NANOS, TimeUnit.NANOSECONDS);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		}
	}

}
