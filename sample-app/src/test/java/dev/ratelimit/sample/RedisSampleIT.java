package dev.ratelimit.sample;

import dev.ratelimit.core.testing.RedisExtension;
import dev.ratelimit.core.testing.RedisServerProcess;
import dev.ratelimit.core.testing.TestRedis;
import org.junit.jupiter.api.condition.EnabledIf;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * Runs the sample application on a real server with its {@code redis} profile, against the test run's Redis.
 * The store reads the test's clock instead of Redis' {@code TIME} (the test kit's {@code @ManualClock}), so that
 * the same tests drive it, and keys of its own prefix, so that no other application context shares its state or
 * has it reset.
 * <p>
 * Runs when {@code REDIS_URL} is set or {@code redis-server} is on the {@code PATH}, or when
 * {@code REDIS_REQUIRED=true}, which makes a missing Redis fail the run.
 */
@ActiveProfiles("redis")
@DirtiesContext
@ExtendWith(RedisExtension.class)
@EnabledIf("redisAvailable")
class RedisSampleIT extends AbstractSampleIT {

	private static volatile String redisUri;

	RedisSampleIT(TestRedis redis) {
		use(redis);
	}

	/** Points the next application context at {@code redis}: resolved before it starts, which reads it. */
	static void use(TestRedis redis) {
		redisUri = redis.uri();
	}

	/** The sample's connection to the Redis of {@link #use}, for this class and others on the same Redis. */
	@DynamicPropertySource
	static void redis(DynamicPropertyRegistry registry) {
		registry.add("spring.data.redis.url", () -> redisUri);
		registry.add("ratelimit.redis.key-prefix", () -> "sample-it:${random.uuid}:");
		// a slow answer on a busy machine must not hand a decision to the local fallback store
		registry.add("ratelimit.redis.timeout", () -> "10s");
	}

	static boolean redisAvailable() {
		String url = System.getenv("REDIS_URL");
		return (url != null && !url.isBlank()) || RedisServerProcess.isAvailable()
				|| "true".equalsIgnoreCase(System.getenv("REDIS_REQUIRED"));
	}

}
