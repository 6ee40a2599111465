package dev.ratelimit.spring.web.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.function.IntFunction;

import dev.ratelimit.core.Decision;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.RateLimitStore;
import dev.ratelimit.core.RateLimitStore.InFlight.Permit;
import dev.ratelimit.spring.RateLimitRejection;
import dev.ratelimit.spring.observability.internal.RateLimitMetrics;
import dev.ratelimit.spring.observability.internal.RateLimitMetrics.Outcome;
import org.jspecify.annotations.Nullable;

import org.springframework.http.HttpHeaders;

/**
 * The limits on requests in flight of the requests that {@link RequestDecisions} decides: a permit of each
 * enforced policy that has such a limit, taken before the request's rates are decided and given back once it
 * has ended, or refused with 429 and a retry in a second, since a permit returns when a request ends.
 */
public final class InFlightLimits {

	/** How long a request refused for want of a permit in flight is told to wait: a short wait, not a window. */
	private static final long RETRY_NANOS = TimeUnit.SECONDS.toNanos(1);

	private final RateLimitStore store;

	private final RateLimitMetrics metrics;

	InFlightLimits(RateLimitStore store, RateLimitMetrics metrics) {
		this.store = store;
		this.metrics = metrics;
	}

	/**
	 * Takes a permit of each policy of {@code enforced} that limits requests in flight, for the client that
	 * {@code keys} computes for it; hands those granted to {@code granted} and returns null, or gives them back
	 * and returns the verdict that refuses the request when one is not granted.
	 */
	CompletionStage<RequestDecisions.@Nullable Verdict> take(EndpointLimits limits, EndpointLimits.Stack enforced,
			IntFunction<String> keys, Consumer<List<InFlightPermit>> granted) {
		List<Integer> limited = new ArrayList<>();
		for (int i : enforced.indices()) {
			if (limits.inFlight().get(i) > 0) {
				limited.add(i);
			}
		}
		RateLimitStore.InFlight inFlight = this.store.inFlight().orElse(null);
		if (limited.isEmpty() || inFlight == null) {
			return CompletableFuture.completedFuture(null);
		}
		List<CompletableFuture<Permit>> taken = new ArrayList<>(limited.size());
		for (int i : limited) {
			taken.add(inFlight.acquire(limits.policies().get(i).name(), keys.apply(i), limits.inFlight().get(i))
				.toCompletableFuture());
		}
		return CompletableFuture.allOf(taken.toArray(CompletableFuture[]::new)).thenApply((done) -> {
			List<InFlightPermit> permits = new ArrayList<>(taken.size());
			InFlightPermit refused = null;
			for (int j = 0; j < taken.size(); j++) {
				InFlightPermit permit = new InFlightPermit(limits.policies().get(limited.get(j)),
						limits.inFlight().get(limited.get(j)), taken.get(j).join());
				if (permit.permit.granted()) {
					permits.add(permit);
					this.metrics.inFlight(permit.policy, 1);
				}
				else if (refused == null) {
					refused = permit;
				}
			}
			if (refused == null) {
				granted.accept(permits);
				return null;
			}
			release(permits);
			this.metrics.record(enforced.policies(), Outcome.REJECTED, 0);
			return rejection(refused);
		});
	}

	/** Gives back the permits in flight of a request that ended, or never ran; each once. */
	void release(List<InFlightPermit> permits) {
		for (InFlightPermit permit : permits) {
			if (permit.release()) {
				this.metrics.inFlight(permit.policy, -1);
			}
		}
	}

	/** The verdict of a request refused because {@code refused} was not granted. */
	private static RequestDecisions.Verdict rejection(InFlightPermit refused) {
		Decision decision = new Decision(false, refused.limit, 0, RETRY_NANOS, 0, 0);
		HttpHeaders headers = new HttpHeaders();
		RateLimitHeaders.writeInFlight(headers, refused.policy, refused.limit);
		RateLimitRejection rejection = new RateLimitRejection(List.of(refused.policy), List.of(decision), true);
		RateLimitHeaders.writeRetryAfter(headers, rejection.retryAfterSeconds());
		return new RequestDecisions.Verdict(RequestDecisions.Verdict.Action.REJECT, headers, rejection, null, 0, null,
				List.of(decision));
	}

	/** A permit in flight of a request under one policy, given back once. */
	public static final class InFlightPermit {

		private final RateLimitPolicy policy;

		private final long limit;

		private final Permit permit;

		private final AtomicBoolean released = new AtomicBoolean();

		InFlightPermit(RateLimitPolicy policy, long limit, Permit permit) {
			this.policy = policy;
			this.limit = limit;
			this.permit = permit;
		}

		/** Gives the permit back; returns false when it was given back already. */
		boolean release() {
			if (!this.released.compareAndSet(false, true)) {
				return false;
			}
			this.permit.release();
			return true;
		}

	}

}
