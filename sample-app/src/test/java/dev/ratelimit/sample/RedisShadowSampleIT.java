package dev.ratelimit.sample;

import dev.ratelimit.core.RateLimitStore;
import dev.ratelimit.core.redis.RedisRateLimitStore;
import dev.ratelimit.core.testing.RedisExtension;
import dev.ratelimit.core.testing.TestRedis;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIf;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Runs the sample application in shadow mode on a real server with its {@code redis} profile, against the
 * test run's Redis, as {@link RedisSampleIT} does.
 */
@ActiveProfiles("redis")
@DirtiesContext
@ExtendWith(RedisExtension.class)
@EnabledIf("dev.ratelimit.sample.RedisSampleIT#redisAvailable")
class RedisShadowSampleIT extends AbstractShadowSampleIT {

	RedisShadowSampleIT(TestRedis redis) {
		RedisSampleIT.use(redis);
	}

	@DynamicPropertySource
	static void redis(DynamicPropertyRegistry registry) {
		RedisSampleIT.redis(registry);
	}

	@Test
	void decidesOnRedis(@Autowired RateLimitStore store) {
		assertThat(store).isInstanceOf(RedisRateLimitStore.class);
	}

}
