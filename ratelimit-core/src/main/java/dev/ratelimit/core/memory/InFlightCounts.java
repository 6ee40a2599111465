package dev.ratelimit.core.memory;

import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;

import dev.ratelimit.core.RateLimitStore;

/**
 * Requests in flight in this JVM: a count per name and key, held only while it is above zero, so that memory
 * grows with the requests in flight and with nothing else.
 */
final class InFlightCounts implements RateLimitStore.InFlight {

	private final ConcurrentHashMap<Limit, Long> held = new ConcurrentHashMap<>();

	@Override
	public CompletionStage<Permit> acquire(String name, String key, long limit) {
		RateLimitStore.InFlight.checkLimit(name, limit);
		Limit counted = new Limit(name, Objects.requireNonNull(key, "key must not be null"));
		long[] after = new long[1];
		boolean[] granted = new boolean[1];
		this.held.compute(counted, (limited, count) -> {
			long held = (count != null) ? count : 0;
			if (held < limit) {
				held++;
				granted[0] = true;
			}
			after[0] = held;
			return (held != 0) ? held : null;
		});
		return CompletableFuture.completedFuture(granted[0] ? Permit.granted(after[0], () -> release(counted))
				: Permit.refused(after[0]));
	}

	private void release(Limit counted) {
		this.held.computeIfPresent(counted, (limited, count) -> (count > 1) ? count - 1 : null);
	}

	private record Limit(String name, String key) {
	}

}
