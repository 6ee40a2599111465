package dev.ratelimit.core.memory;

import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;

import dev.ratelimit.core.RateLimitStore;

/**
 * Requests in flight in this JVM: a count per name and key, held only while it is above zero, so that memory
 * grows with the requests in flight and with nothing else.
 */
final class InFlightCounts implements RateLimitStore.InFlight {

	private final ConcurrentHashMap<Limit, Long> held = new ConcurrentHashMap<>();

	@Override
	public CompletionStage<Permit> acquire(String name, String key, long limit) {
		return CompletableFuture.completedFuture(take(name, key, limit));
	}

	/** Takes one of the {@code limit} permits of {@code key} under {@code name} at once. */
	Permit take(String name, String key, long limit) {
		if (limit < 1) {
			throw new IllegalArgumentException("in-flight limit '" + name + "' must be at least 1, was " + limit);
		}
		Limit counted = new Limit(Objects.requireNonNull(name, "name must not be null"),
				Objects.requireNonNull(key, "key must not be null"));
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
		return granted[0] ? new Held(counted, after[0]) : Permit.refused(after[0]);
	}

	private record Limit(String name, String key) {
	}

	private final class Held implements Permit {

		private final Limit limit;

		private final long held;

		private final AtomicBoolean released = new AtomicBoolean();

		Held(Limit limit, long held) {
			this.limit = limit;
			this.held = held;
		}

		@Override
		public boolean granted() {
			return true;
		}

		@Override
		public long held() {
			return this.held;
		}

		@Override
		public void release() {
			if (this.released.compareAndSet(false, true)) {
				InFlightCounts.this.held.computeIfPresent(this.limit,
						(limited, count) -> (count > 1) ? count - 1 : null);
			}
		}

	}

}
