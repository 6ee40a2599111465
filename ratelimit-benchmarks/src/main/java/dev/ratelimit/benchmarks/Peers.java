package dev.ratelimit.benchmarks;

import java.time.Duration;

import com.google.common.util.concurrent.BurstyRateLimiters;
import dev.ratelimit.core.RateLimitPolicy;
import io.github.bucket4j.Bandwidth;
import io.github.bucket4j.Bucket;
import io.github.resilience4j.ratelimiter.RateLimiter;
import io.github.resilience4j.ratelimiter.RateLimiterConfig;
import io.github.resilience4j.ratelimiter.internal.AtomicRateLimiter;

/**
 * The peers' local limiters, each configured to a policy's limit, window and burst, the way their documentation
 * shows, and never waiting for a permit.
 */
public final class Peers {

	private Peers() {
	}

	/**
	 * A Bucket4j local bucket: capacity {@code burst}, refilled greedily by {@code limit} per {@code window}, with
	 * nanosecond time like ours (its default is milliseconds) and its default lock-free synchronization.
	 * @param policy the policy
	 * @return the bucket
	 */
	public static Bucket bucket4j(RateLimitPolicy policy) {
		return Bucket.builder()
			.addLimit(Bandwidth.builder()
				.capacity(policy.burst())
				.refillGreedy(policy.limit(), policy.window())
				.build())
			.withNanosecondPrecision()
			.build();
	}

	/**
	 * A Resilience4j {@link AtomicRateLimiter}: {@code limit} permits per refresh period of {@code window}, which
	 * is a fixed window, so its burst is the limit; it never waits.
	 * @param policy the policy, whose burst must be its limit
	 * @return the limiter
	 */
	public static RateLimiter resilience4j(RateLimitPolicy policy) {
		if (policy.burst() != policy.limit()) {
			throw new IllegalArgumentException("Resilience4j's burst is its limit, not " + policy.burst());
		}
		RateLimiterConfig config = RateLimiterConfig.custom()
			.limitForPeriod(Math.toIntExact(policy.limit()))
			.limitRefreshPeriod(policy.window())
			.timeoutDuration(Duration.ZERO)
			.build();
		return new AtomicRateLimiter(policy.name(), config);
	}

	/**
	 * A Guava smooth bursty limiter at {@code limit / window} permits per second, holding at most {@code burst}
	 * permits and full from the start.
	 * @param policy the policy
	 * @return the limiter
	 */
	public static com.google.common.util.concurrent.RateLimiter guava(RateLimitPolicy policy) {
		double perSecond = policy.limit() * 1e9 / policy.window().toNanos();
		return BurstyRateLimiters.create(perSecond, policy.burst());
	}

}
