package dev.ratelimit.core.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.IntSupplier;

import dev.ratelimit.core.Decision;
import dev.ratelimit.core.FailurePolicy;
import dev.ratelimit.core.KeyedPolicy;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.RateLimitStore;

/**
 * Decides as the {@link FailurePolicy} says when Redis does not. Under {@link FailurePolicy#LOCAL} each
 * instance enforces its share of every limit, {@code ceil(limit / instances)} (and likewise of a burst), so
 * that a fleet of {@code n} admits at most {@code limit + n - 1} per window while Redis is away.
 */
final class Fallback {

	private static final long MAX_DENY_RETRY_NANOS = Duration.ofSeconds(1).toNanos();

	private final FailurePolicy policy;

	private final RateLimitStore local;

	private final IntSupplier instances;

	/** At most this many policies, costs apart, keep their share, so that costs computed per request cannot grow it. */
	private static final int MAX_SHARES = 1024;

	/** Each policy's share for the fleet size it was last computed for. */
	private final ConcurrentHashMap<RateLimitPolicy, Share> shares = new ConcurrentHashMap<>();

	Fallback(FailurePolicy policy, RateLimitStore local, IntSupplier instances) {
		this.policy = policy;
		this.local = local;
		this.instances = instances;
	}

	FailurePolicy policy() {
		return this.policy;
	}

	/** Decides the limits as the failure policy says; its decisions take nothing from Redis' state. */
	List<Decision> decide(List<KeyedPolicy> limits) {
		List<RateLimitPolicy> policies = limits.stream().map(KeyedPolicy::policy).toList();
		return switch (this.policy) {
			case ALLOW -> policies.stream()
				.map((policy) -> new Decision(true, policy.limit(), policy.capacity() - policy.cost(), 0, 0, 0))
				.toList();
			case DENY -> policies.stream().map((policy) -> {
				long retry = Math.min(policy.window().toNanos(), MAX_DENY_RETRY_NANOS);
				return new Decision(false, policy.limit(), 0, retry, policy.window().toNanos(), 0);
			}).toList();
			case LOCAL -> decideLocally(limits).stream().map(Fallback::untaken).toList();
		};
	}

	private List<Decision> decideLocally(List<KeyedPolicy> limits) {
		int instances = this.instances.getAsInt();
		if (limits.size() == 1) {
			return List.of(this.local.limiter(share(limits.get(0).policy(), instances)).decide(limits.get(0).key()));
		}
		List<KeyedPolicy> shares = new ArrayList<>(limits.size());
		for (KeyedPolicy limit : limits) {
			shares.add(new KeyedPolicy(limit.key(), share(limit.policy(), instances)));
		}
		return this.local.decideAll(shares);
	}

	/** The local store's decision, which a give-back to Redis must not find taken. */
	private static Decision untaken(Decision decision) {
		return new Decision(decision.allowed(), decision.limit(), decision.remaining(), decision.retryAfterNanos(),
				decision.resetAfterNanos(), decision.delayNanos());
	}

	private RateLimitPolicy share(RateLimitPolicy policy, int instances) {
		Share share = this.shares.get(policy);
		if (share == null || share.instances != instances) {
			share = new Share(instances, share(policy, (long) instances));
			if (this.shares.size() < MAX_SHARES) {
				this.shares.put(policy, share);
			}
		}
		return share.policy;
	}

	/**
	 * One instance's share of a policy: the limit and the burst divided by the fleet size, rounded up. The share
	 * depends on the policy's cost only for that cost itself, so that every cost of a policy decides over the
	 * same local states; a cost above the share's capacity takes the whole capacity, so that the request can
	 * still pass once per window, as it could in Redis.
	 */
	static RateLimitPolicy share(RateLimitPolicy policy, long instances) {
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
					burst, 1, Math.min(policy.delayAfter(), burst));
			return share.withCost(Math.min(policy.cost(), share.capacity()));
		}
		catch (IllegalArgumentException ex) {
			// a share that cannot be computed exactly: enforce the whole limit rather than none
			return policy;
		}
	}

	private static long ceilDiv(long a, long b) {
		return -Math.floorDiv(-a, b);
	}

	private record Share(int instances, RateLimitPolicy policy) {
	}

}
