package dev.ratelimit.core.redis;

import java.util.ArrayList;
import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * Resets every client of the store's key prefix: deletes their states in Redis, one {@code SCAN} step a call, on
 * every primary of a Cluster, releasing each as a reset of one client does, so that no instance that still
 * expects a state restores it; then forgets what this instance kept of them (the denials, what Redis last said
 * of each key, the fallback's states) and tells the fleet, whose instances drop their denials at their next
 * heartbeat. The fleet's own keys, and every key of another prefix, stay as they are.
 */
final class PrefixReset {

	/** How many keys one step looks at: enough to go round a test's keys in one call, short for a large Redis. */
	static final int KEYS_PER_STEP = 1000;

	private final ScriptCaller caller;

	private final RedisKeys keys;

	private final boolean cluster;

	private final @Nullable LocalDenials denials;

	private final KnownStates known;

	private final Fallback fallback;

	private final RedisFleet fleet;

	PrefixReset(ScriptCaller caller, RedisKeys keys, boolean cluster, @Nullable LocalDenials denials,
			KnownStates known, Fallback fallback, RedisFleet fleet) {
		this.caller = caller;
		this.keys = keys;
		this.cluster = cluster;
		this.denials = denials;
		this.known = known;
		this.fallback = fallback;
		this.fleet = fleet;
	}

	/**
	 * Resets every client, waiting for each call at most the maximum wait.
	 * @throws IllegalStateException if Redis did not delete them all
	 */
	void resetAll() {
		try {
			for (String route : routes()) {
				String cursor = "0";
				do {
					List<Long> reply = call(route, cursor);
					if (reply.size() != 2) {
						throw new IllegalStateException("Expected 2 integers from the reset script, got " + reply);
					}
					cursor = Long.toString(reply.get(0));
				}
				while (!cursor.equals("0"));
			}
		}
		catch (ScriptCaller.CallFailure failure) {
			throw new IllegalStateException("Redis did not reset every key under the prefix '" + this.keys.prefix()
					+ "': " + failure.getCause(), failure.getCause());
		}
		if (this.denials != null) {
			this.denials.forgetAll();
		}
		this.known.clear();
		this.fallback.resetAll();
		this.fleet.announceResetAll();
	}

	/** A key in a slot of each primary on a Cluster, as Redis tells them; else the one Redis' key. */
	private List<String> routes() throws ScriptCaller.CallFailure {
		if (!this.cluster) {
			return List.of(this.keys.resetAllRoute());
		}
		List<String> routes = new ArrayList<>();
		for (long slot : call(this.keys.resetAllRoute(0), "primaries")) {
			routes.add(this.keys.resetAllRoute((int) slot));
		}
		return routes;
	}

	private List<Long> call(String route, String cursor) throws ScriptCaller.CallFailure {
		return this.caller.call(RedisScripts.get().resetAll(), List.of(route), (deadline) -> List.of(cursor,
				this.keys.pattern(), this.keys.fleetKeys(), Integer.toString(KEYS_PER_STEP)));
	}

}
