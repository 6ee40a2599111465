package dev.ratelimit.core.redis;

import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.extension.ExtendWith;

import dev.ratelimit.core.ManualTimeSource;
import dev.ratelimit.core.RateLimitStore;
import dev.ratelimit.core.StoreContractTests;
import dev.ratelimit.core.testing.RedisExtension;
import dev.ratelimit.core.testing.TestRedis;

/**
 * The store contract, unchanged, on a real Redis: each store gets keys of its own.
 */
@ExtendWith(RedisExtension.class)
class RedisStoreContractIT extends StoreContractTests {

	private static final String RUN = Long.toString(ThreadLocalRandom.current().nextLong() >>> 1, 36);

	private static final AtomicInteger stores = new AtomicInteger();

	private TestRedis redis;

	@BeforeEach
	void useRedis(TestRedis redis) {
		this.redis = redis;
	}

	@Override
	protected RateLimitStore createStore(ManualTimeSource clock) {
		return RedisRateLimitStore.builder(this.redis.executor())
			.keyPrefix("contract:" + RUN + ":" + stores.incrementAndGet() + ":")
			.timeSource(clock)
			.failurePolicy(FailurePolicy.DENY)
			.timeout(java.time.Duration.ofSeconds(10))
			.build();
	}

}
