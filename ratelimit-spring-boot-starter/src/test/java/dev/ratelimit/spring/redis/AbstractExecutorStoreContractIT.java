package dev.ratelimit.spring.redis;

import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.data.redis.connection.RedisConfiguration;

import dev.ratelimit.core.FailurePolicy;
import dev.ratelimit.core.ManualTimeSource;
import dev.ratelimit.core.RateLimitStore;
import dev.ratelimit.core.StoreContractTests;
import dev.ratelimit.core.redis.RedisRateLimitStore;
import dev.ratelimit.core.testing.FailLoudly;
import dev.ratelimit.core.testing.OpenStores;
import dev.ratelimit.core.testing.RedisExtension;
import dev.ratelimit.core.testing.TestRedis;

/**
 * The store contract on a real Redis reached through one of the starter's executors, each store under keys
 * of its own.
 */
@ExtendWith(RedisExtension.class)
abstract class AbstractExecutorStoreContractIT extends StoreContractTests {

	private static final String RUN = Long.toString(ThreadLocalRandom.current().nextLong() >>> 1, 36);

	private static final AtomicInteger stores = new AtomicInteger();

	private AbstractScriptExecutorIT.Connection connection;

	private final OpenStores open = new OpenStores();

	/**
	 * Opens the executor under test on the given connection settings.
	 */
	abstract AbstractScriptExecutorIT.Connection connect(RedisConfiguration configuration);

	@BeforeEach
	void connect(TestRedis redis) {
		if (this.connection == null) {
			this.connection = connect(AbstractScriptExecutorIT.standalone(redis));
		}
	}

	@AfterEach
	void closeStores() {
		this.open.closeAll();
	}

	@AfterAll
	void disconnect() {
		if (this.connection != null) {
			this.connection.close();
		}
	}

	@Override
	protected RateLimitStore createStore(ManualTimeSource clock) {
		return this.open.track(RedisRateLimitStore.builder(this.connection.executor())
			.keyPrefix(getClass().getSimpleName() + ":" + RUN + ":" + stores.incrementAndGet() + ":")
			.timeSource(clock)
			.timeout(Duration.ofSeconds(10))
			.failurePolicy(FailurePolicy.DENY)
			.onFailure(FailLoudly.ON_REDIS_FAILURE)
			.build());
	}

}
