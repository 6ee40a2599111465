package dev.ratelimit.core.redis;

import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;

/**
 * This instance's membership in the fleet that shares the store's Redis and key prefix: a heartbeat about once
 * a {@link #HEARTBEAT period} tells Redis that the instance is there and tells the instance how many share the
 * quotas, what Redis' clock reads, and how many runtime changes and resets the fleet has counted. A member
 * that misses three heartbeats no longer counts. While Redis is away the count keeps its last value, and an
 * instance that never reached Redis counts itself alone.
 */
final class Fleet {

	static final Duration HEARTBEAT = Duration.ofSeconds(1);

	private static final String MEMBER_TTL_MILLIS = Long.toString(3 * HEARTBEAT.toMillis());

	private final ScriptCaller caller;

	private final List<String> keys;

	private final String id = UUID.randomUUID().toString();

	private final List<String> join = List.of(this.id, MEMBER_TTL_MILLIS, "");

	private volatile int size = 1;

	private volatile long changes = -1;

	private volatile long resets = -1;

	Fleet(ScriptCaller caller, RedisKeys keys) {
		this.caller = caller;
		this.keys = List.of(keys.fleet(), keys.control());
	}

	/** How many instances shared the quotas at the last heartbeat, at least 1. */
	int size() {
		return this.size;
	}

	/** Sends a heartbeat and waits for its reply, at most the store's timeout. */
	void heartbeat() throws ScriptCaller.CallFailure {
		List<Long> reply = this.caller.call(RedisScripts.get().fleet(), this.keys, (deadline) -> this.join);
		try {
			accept(reply, this.caller.clock().nanoTime());
		}
		catch (IllegalStateException ex) {
			throw new ScriptCaller.CallFailure(ScriptCaller.Kind.ERROR, ex, this.caller.clock().nanoTime());
		}
	}

	/** Sends a heartbeat without waiting for its reply. */
	CompletableFuture<Void> sendHeartbeat() {
		return this.caller.send(RedisScripts.get().fleet(), this.keys, this.join)
			.thenAccept((reply) -> accept(reply, this.caller.clock().nanoTime()));
	}

	/** How many changes the fleet had shared at the last heartbeat, -1 before one answered. */
	long changes() {
		return this.changes;
	}

	/** How many resets the fleet had counted at the last heartbeat, -1 before one answered. */
	long resets() {
		return this.resets;
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

	/** Leaves the fleet, so that the others count it out at once rather than after its last heartbeat expires. */
	void leave() throws ScriptCaller.CallFailure {
		this.caller.call(RedisScripts.get().fleet(), this.keys,
				(deadline) -> List.of(this.id, MEMBER_TTL_MILLIS, "leave"));
	}

}
