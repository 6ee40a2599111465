package dev.ratelimit.core.docs;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.Decision;
import dev.ratelimit.core.FailurePolicy;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.RateLimiter;
import dev.ratelimit.core.redis.RedisRateLimitStore;
import dev.ratelimit.core.redis.RedisScriptExecutor;

/**
 * The examples of docs/redis.md: building the Redis store, deciding with it and warming it up.
 */
class RedisStoreExamples {

	private final LongAdder failures = new LongAdder();

	private final RateLimitPolicy perSecond = RateLimitPolicy.of("per-second", Algorithm.GCRA, 5,
			Duration.ofSeconds(1));

	private final RateLimitPolicy perMinute = RateLimitPolicy.of("per-minute", Algorithm.GCRA, 100,
			Duration.ofMinutes(1));

	private final RateLimitPolicy perDay = RateLimitPolicy.of("per-day", Algorithm.FIXED_WINDOW, 10_000,
			Duration.ofDays(1));

	List<Decision> decide(RedisScriptExecutor executor) {
		RedisRateLimitStore store = RedisRateLimitStore.builder(executor) // a RedisScriptExecutor
				.keyPrefix("ratelimit:")                 // the default
				.timeout(Duration.ofMillis(100))         // the default
				.failurePolicy(FailurePolicy.LOCAL)      // the default
				.onFailure((policies, cause) -> failures.increment())
				.build();

		RateLimiter api = store.limiter(RateLimitPolicy.of("api", Algorithm.GCRA, 10, Duration.ofSeconds(10)));
		Decision decision = api.decide("203.0.113.7");
		List<Decision> stacked = store.decideAll("203.0.113.7", List.of(perSecond, perDay));
		store.close();
		return List.of(decision, stacked.get(0), stacked.get(1));
	}

	void warmUp(RedisRateLimitStore store, RateLimitPolicy apiPolicy) throws Exception {
		store.warmUp().orElseThrow()
			.warmUp(List.of(List.of(apiPolicy), List.of(perSecond, perMinute)))
			.toCompletableFuture()
			.get(2, TimeUnit.SECONDS);
	}

}
