package dev.ratelimit.core.redis;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import dev.ratelimit.core.RateLimitStore;

/**
 * Requests in flight across a fleet: each holds a lease in Redis, in its client's set under the limit's name,
 * which this instance renews every third of the lease's life while the request runs. An instance that dies
 * holding leases stops renewing them, and they expire within a lease's life, so no permit is lost for good and
 * the fleet never holds more than the limit at once while Redis answers. A call that Redis does not answer in
 * time is decided by the failure policy; a release it does not answer lets the lease expire.
 */
final class InFlightLeases implements RateLimitStore.InFlight {

	private final ScriptCaller caller;

	private final RedisKeys keys;

	private final DecisionCalls calls;

	private final Fallback fallback;

	private final long leaseMicros;

	/** Unique to this instance, so that no two instances' leases have the same name. */
	private final String instance = UUID.randomUUID().toString();

	private final AtomicLong leases = new AtomicLong();

	/** The leases this instance holds, by name, with the key of the set each is in. */
	private final Map<String, String> held = new ConcurrentHashMap<>();

	private final ScheduledExecutorService scheduler;

	/** How often the leases held are renewed: every third of their life. */
	private final long renewMicros;

	/** Whether a renewal of the leases held is scheduled. */
	private final AtomicBoolean renewing = new AtomicBoolean();

	private volatile boolean closed;

	InFlightLeases(ScriptCaller caller, RedisKeys keys, DecisionCalls calls, Fallback fallback, long leaseMicros,
			ScheduledExecutorService scheduler) {
		this.caller = caller;
		this.keys = keys;
		this.calls = calls;
		this.fallback = fallback;
		this.leaseMicros = leaseMicros;
		this.scheduler = scheduler;
		this.renewMicros = Math.max(1, leaseMicros / 3);
	}

	@Override
	public CompletionStage<Permit> acquire(String name, String key, long limit) {
		RateLimitStore.InFlight.checkLimit(name, limit);
		Objects.requireNonNull(key, "key must not be null");
		String set = this.keys.state(RedisKeys.escape(key), name) + "!in-flight";
		String lease = this.instance + ":" + this.leases.incrementAndGet();
		String now = this.calls.stamp();
		String limitArgument = Long.toString(limit);
		String lasts = Long.toString(this.leaseMicros);
		return this.caller
			.call(RedisScripts.get().inFlight(), List.of(set),
					(deadline) -> deadline.isEmpty() ? List.of(now, "acquire", lease, limitArgument, lasts)
							: List.of(now, "acquire", lease, limitArgument, lasts, deadline),
					false)
			.thenApply((reply) -> (reply.get(0) == 1) ? held(set, lease, reply.get(1)) : Permit.refused(reply.get(1)))
			.exceptionallyCompose((failure) -> this.fallback.inFlight(name, key, limit));
	}

	/** A lease Redis granted, renewed until it is released. */
	private Permit held(String set, String lease, long held) {
		this.held.put(lease, set);
		renewLater();
		return Permit.granted(held, () -> {
			this.held.remove(lease);
			this.caller.send(RedisScripts.get().inFlight(), List.of(set),
					List.of(this.calls.stamp(), "release", lease));
		});
	}

	/** Schedules the next renewal of the leases held, unless one is scheduled already. */
	private void renewLater() {
		if (this.closed || !this.renewing.compareAndSet(false, true)) {
			return;
		}
		try {
			this.scheduler.schedule(this::renewDue, this.renewMicros, TimeUnit.MICROSECONDS);
		}
		catch (RejectedExecutionException ex) {
			// the store is closing: the leases expire
			this.renewing.set(false);
		}
	}

	private void renewDue() {
		this.renewing.set(false);
		if (this.closed) {
			return;
		}
		renewAll();
		if (!this.held.isEmpty()) {
			renewLater();
		}
	}

	/**
	 * Renews every lease this instance holds: the requests holding them still run.
	 * @return a stage completing once Redis has answered every renewal, or failed with the first that failed
	 */
	CompletableFuture<Void> renewAll() {
		String lasts = Long.toString(this.leaseMicros);
		List<CompletableFuture<List<Long>>> renewals = new ArrayList<>();
		this.held.forEach((lease, set) -> renewals.add(this.caller.send(RedisScripts.get().inFlight(), List.of(set),
				List.of(this.calls.stamp(), "renew", lease, "", lasts))));
		return CompletableFuture.allOf(renewals.toArray(CompletableFuture[]::new));
	}

	/** Stops renewing the leases held, which then expire unless released. */
	void close() {
		this.closed = true;
	}

}
