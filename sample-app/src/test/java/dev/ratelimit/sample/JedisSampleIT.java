package dev.ratelimit.sample;

import dev.ratelimit.core.redis.RedisScriptExecutor;
import dev.ratelimit.core.testing.TestRedis;
import dev.ratelimit.spring.redis.JedisScriptExecutor;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.test.context.TestPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Runs the sample application's Redis tests with its Redis connection on Jedis, which makes each decision on
 * the request's own thread.
 */
@TestPropertySource(properties = "spring.data.redis.client-type=jedis")
class JedisSampleIT extends RedisSampleIT {

	JedisSampleIT(TestRedis redis) {
		super(redis);
	}

	@Test
	void decidesOnTheRequestThroughJedis(@Autowired RedisScriptExecutor executor) {
		assertThat(executor).isInstanceOf(JedisScriptExecutor.class);
	}

}
