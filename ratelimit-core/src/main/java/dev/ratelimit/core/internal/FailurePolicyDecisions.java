package dev.ratelimit.core.internal;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

import org.jspecify.annotations.Nullable;

import dev.ratelimit.core.Decision;
import dev.ratelimit.core.FailurePolicy;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.RateLimitStore;
import dev.ratelimit.core.TimeSource;
import dev.ratelimit.core.memory.InMemoryRateLimitStore;

/**
 * What a {@link FailurePolicy} decides without the server: the decisions of {@code ALLOW} and {@code DENY}, and
 * under {@code LOCAL} the store that decides and each instance's share of a limit, {@code ceil(limit / n)} for a
 * fleet of {@code n}.
 */
public final class FailurePolicyDecisions {

	/** The longest a denial of {@code DENY} asks to wait, so that callers try again soon after the server is back. */
	private static final long MAX_DENY_RETRY_NANOS = Duration.ofSeconds(1).toNanos();

	private FailurePolicyDecisions() {
	}

	/**
	 * Returns what {@link FailurePolicy#ALLOW} decides: every policy allows, untracked.
	 * @param policies the policies of the request
	 * @return one decision per policy
	 */
	public static List<Decision> allowed(List<RateLimitPolicy> policies) {
		return policies.stream()
			.map((policy) -> new Decision(true, policy.limit(), policy.capacity() - policy.cost(), 0, 0, 0))
			.toList();
	}

	/**
	 * Returns what {@link FailurePolicy#DENY} decides: every policy denies, to be tried again within its window, a
	 * second at most.
	 * @param policies the policies of the request
	 * @return one decision per policy
	 */
	public static List<Decision> denied(List<RateLimitPolicy> policies) {
		return policies.stream().map((policy) -> {
			long retry = Math.min(policy.window().toNanos(), MAX_DENY_RETRY_NANOS);
			return new Decision(false, policy.limit(), 0, retry, policy.window().toNanos(), 0);
		}).toList();
	}

	/**
	 * Returns what a failure policy answers for a permit of a request in flight that the server did not grant or
	 * refuse: {@code ALLOW} grants it untracked, {@code DENY} refuses it, {@code LOCAL} takes one of this
	 * instance's share of the limit, {@code ceil(limit / instances)}, on the local store.
	 * @param policy the failure policy
	 * @param local the store that decides under {@code LOCAL}, from {@link #local}
	 * @param instances how many instances share the limit
	 * @param name the name of the limit
	 * @param key who is limited
	 * @param limit how many of the key's requests the fleet may have in flight at once
	 * @return a stage completing with the permit
	 */
	public static CompletionStage<RateLimitStore.InFlight.Permit> inFlight(FailurePolicy policy,
			RateLimitStore local, int instances, String name, String key, long limit) {
		return switch (policy) {
			case ALLOW -> CompletableFuture.completedFuture(RateLimitStore.InFlight.Permit.granted(0, () -> {
			}));
			case DENY -> CompletableFuture.completedFuture(RateLimitStore.InFlight.Permit.refused(0));
			case LOCAL -> local.inFlight().orElseThrow().acquire(name, key, ceilDiv(limit, instances));
		};
	}

	/**
	 * Returns the store that decides under {@link FailurePolicy#LOCAL}.
	 * @param given the store the application gave, or null
	 * @param timeSource the store's time source, or null for the system's
	 * @return {@code given}, or a new in-memory store on the time source
	 */
	public static RateLimitStore local(@Nullable RateLimitStore given, @Nullable TimeSource timeSource) {
		if (given != null) {
			return given;
		}
		InMemoryRateLimitStore.Builder memory = InMemoryRateLimitStore.builder();
		if (timeSource != null) {
			memory.timeSource(timeSource);
		}
		return memory.build();
	}

	/**
	 * Returns one instance's share of a policy: the limit and the burst divided by the fleet size, rounded up. The
	 * share depends on the policy's cost only for that cost itself, so that every cost of a policy decides over
	 * the same local states; a cost above the share's capacity takes the whole capacity, so that the request can
	 * still pass once per window, as it could on the server.
	 * @param policy the policy
	 * @param instances the fleet size
	 * @return the share, or {@code policy} itself for a fleet of one or a share that cannot be computed exactly
	 */
	public static RateLimitPolicy share(RateLimitPolicy policy, long instances) {
		if (instances <= 1) {
			return policy;
		}
		long limit = ceilDiv(policy.limit(), instances);
		long burst = switch (policy.algorithm()) {
			case TOKEN_BUCKET, LEAKY_BUCKET, GCRA -> ceilDiv(policy.burst(), instances);
			case FIXED_WINDOW, SLIDING_LOG, SLIDING_WINDOW_COUNTER -> limit;
		};
		try {
			RateLimitPolicy share = new RateLimitPolicy(policy.name(), policy.algorithm(), limit, policy.window(),
					burst, 1, Math.min(policy.delayAfter(), burst), Duration.ZERO, Duration.ZERO, policy.calendar());
			return share.withCost(Math.min(policy.cost(), share.capacity()));
		}
		catch (IllegalArgumentException ex) {
			// a share that cannot be computed exactly: enforce the whole limit rather than none
			return policy;
		}
	}

	/**
	 * Returns the policy of a key an instance knows nothing of from the server: one request per window, of any
	 * cost, the most that every instance can admit while the others may have admitted the whole limit through
	 * the server.
	 * @param policy the policy
	 * @return the policy of one request per window, or {@code policy} itself where that cannot be written
	 */
	public static RateLimitPolicy unseen(RateLimitPolicy policy) {
		try {
			return new RateLimitPolicy(policy.name(), policy.algorithm(), 1, policy.window(), 1, 1,
					Math.min(policy.delayAfter(), 1), Duration.ZERO, Duration.ZERO, policy.calendar());
		}
		catch (IllegalArgumentException ex) {
			// a policy of one request that cannot be written: enforce the whole limit rather than none
			return policy;
		}
	}

	/**
	 * Divides, rounding up.
	 * @param a the dividend
	 * @param b the divisor, positive
	 * @return {@code ceil(a / b)}
	 */
	public static long ceilDiv(long a, long b) {
		return -Math.floorDiv(-a, b);
	}

}
