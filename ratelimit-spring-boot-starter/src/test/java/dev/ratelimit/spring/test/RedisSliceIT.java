package dev.ratelimit.spring.test;

import java.time.Duration;

import dev.ratelimit.core.ManualTimeSource;
import dev.ratelimit.core.RateLimitStore;
import dev.ratelimit.core.redis.RedisRateLimitStore;
import dev.ratelimit.core.testing.RedisExtension;
import dev.ratelimit.core.testing.TestRedis;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.webmvc.test.autoconfigure.WebMvcTest;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.servlet.assertj.MockMvcTester;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A {@code @WebMvcTest} that says it wants Redis gets the Redis store, which reads the {@link ManualTimeSource}
 * that the test declares as a bean.
 */
@WebMvcTest(controllers = KitApplication.HourlyController.class, properties = { "ratelimit.store=redis",
		"ratelimit.redis.key-prefix=kit-slice-it:${random.uuid}:", "ratelimit.redis.timeout=10s" })
@ImportAutoConfiguration(DataRedisAutoConfiguration.class)
@Import(RedisSliceIT.Clock.class)
@DirtiesContext
@ExtendWith(RedisExtension.class)
class RedisSliceIT {

	private static volatile String redisUri;

	@Autowired
	private MockMvcTester mvc;

	@Autowired
	private ManualTimeSource clock;

	@Autowired
	private RateLimitStore store;

	RedisSliceIT(TestRedis redis) {
		redisUri = redis.uri();
	}

	@DynamicPropertySource
	static void redis(DynamicPropertyRegistry registry) {
		registry.add("spring.data.redis.url", () -> redisUri);
	}

	@Test
	void decidesOnRedisOnTheClockItDeclares() {
		assertThat(this.store).isInstanceOf(RedisRateLimitStore.class);
		assertThat(this.mvc.get().uri("/hourly")).hasStatusOk();
		assertThat(this.mvc.get().uri("/hourly")).hasStatus(429);
		this.clock.advance(Duration.ofHours(1));
		assertThat(this.mvc.get().uri("/hourly")).hasStatusOk();
	}

	@TestConfiguration(proxyBeanMethods = false)
	static class Clock {

		@Bean
		ManualTimeSource clock() {
			return new ManualTimeSource();
		}

	}

}
