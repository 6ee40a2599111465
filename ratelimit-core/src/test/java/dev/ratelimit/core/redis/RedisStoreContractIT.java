package dev.ratelimit.core.redis;

import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.extension.ExtendWith;

import dev.ratelimit.core.FailurePolicy;
import dev.ratelimit.core.ManualTimeSource;
import dev.ratelimit.core.RateLimitStore;
import dev.ratelimit.core.StoreContractTests;
import dev.ratelimit.core.testing.FailLoudly;
import dev.ratelimit.core.testing.OpenStores;
import dev.ratelimit.core.testing.RedisExtension;
import dev.ratelimit.core.testing.TestRedis;

/**
 * The store contract, unchanged, on a real Redis: each store gets keys of its own, and a decision Redis did not
 * make fails the test rather than passing as the failure policy's.
 */
@ExtendWith(RedisExtension.class)
class RedisStoreContractIT extends StoreContractTests {

	private static final String RUN = Long.toString(ThreadLocalRandom.current().nextLong() >>> 1, 36);

	private static final AtomicInteger created = new AtomicInteger();

	private TestRedis redis;

	private final OpenStores stores = new OpenStores();

	@BeforeEach
	void useRedis(TestRedis redis) {
		this.redis = redis;
	}

	@AfterEach
	void closeStores() {
		this.stores.closeAll();
	}

	@Override
	protected RateLimitStore createStore(ManualTimeSource clock) {
		return this.stores.track(RedisRateLimitStore.builder(this.redis.executor())
			.keyPrefix("contract:" + RUN + ":" + created.incrementAndGet() + ":")
			.timeSource(clock)
			.failurePolicy(FailurePolicy.DENY)
			.timeout(java.time.Duration.ofSeconds(10))
			.onFailure(FailLoudly.ON_REDIS_FAILURE)
			.build());
	}

}
