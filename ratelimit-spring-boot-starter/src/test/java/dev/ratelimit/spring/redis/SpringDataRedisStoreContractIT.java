package dev.ratelimit.spring.redis;

import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import dev.ratelimit.core.ManualTimeSource;
import dev.ratelimit.core.RateLimitStore;
import dev.ratelimit.core.StoreContractTests;
import dev.ratelimit.core.redis.FailurePolicy;
import dev.ratelimit.core.redis.RedisRateLimitStore;
import dev.ratelimit.core.testing.RedisExtension;
import dev.ratelimit.core.testing.TestRedis;

/**
 * The store contract on a real Redis reached through Spring Data Redis.
 */
@ExtendWith(RedisExtension.class)
class SpringDataRedisStoreContractIT extends StoreContractTests {

	private static final String RUN = Long.toString(ThreadLocalRandom.current().nextLong() >>> 1, 36);

	private static final AtomicInteger stores = new AtomicInteger();

	private LettuceConnectionFactory connectionFactory;

	private SpringDataRedisScriptExecutor executor;

	@BeforeEach
	void connect(TestRedis redis) {
		if (this.connectionFactory == null) {
			this.connectionFactory = new LettuceConnectionFactory(AbstractScriptExecutorIT.standalone(redis));
			this.connectionFactory.afterPropertiesSet();
			this.connectionFactory.start();
			this.executor = new SpringDataRedisScriptExecutor(this.connectionFactory);
		}
	}

	@AfterAll
	void disconnect() {
		if (this.connectionFactory != null) {
			this.connectionFactory.destroy();
		}
	}

	@Override
	protected RateLimitStore createStore(ManualTimeSource clock) {
		return RedisRateLimitStore.builder(this.executor)
			.keyPrefix("spring-contract:" + RUN + ":" + stores.incrementAndGet() + ":")
			.timeSource(clock)
			.timeout(Duration.ofSeconds(10))
			.failurePolicy(FailurePolicy.DENY)
			.onFailure((policies, cause) -> {
				throw new AssertionError("Redis failed", cause);
			})
			.build();
	}

}
