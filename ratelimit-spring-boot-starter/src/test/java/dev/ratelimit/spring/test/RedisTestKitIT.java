package dev.ratelimit.spring.test;

import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;

import dev.ratelimit.core.ManualTimeSource;
import dev.ratelimit.core.RateLimitStore;
import dev.ratelimit.core.redis.RedisRateLimitStore;
import dev.ratelimit.core.testing.RedisExtension;
import dev.ratelimit.core.testing.TestRedis;
import io.lettuce.core.SetArgs;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webmvc.test.autoconfigure.AutoConfigureMockMvc;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.servlet.assertj.MockMvcTester;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The test kit on the Redis store: each test method starts with a full quota, only the keys of the context's own
 * prefix are reset, and the store reads the manual clock instead of Redis' {@code TIME}.
 */
@SpringBootTest(properties = { "ratelimit.store=redis", "ratelimit.redis.key-prefix=kit-it:${random.uuid}:",
		"ratelimit.redis.timeout=10s" })
@AutoConfigureMockMvc
@ManualClock
@DirtiesContext
@ExtendWith(RedisExtension.class)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class RedisTestKitIT {

	/** A key of another application's prefix on the same Redis, which no reset of this one may touch. */
	private static final String OTHER_PREFIX_KEY = "kit-it-other:"
			+ Long.toString(ThreadLocalRandom.current().nextLong() >>> 1, 36) + ":{127.0.0.1}:hourly";

	private static volatile TestRedis redis;

	@Autowired
	private MockMvcTester mvc;

	@Autowired
	private ManualTimeSource clock;

	@Autowired
	private RateLimitStore store;

	RedisTestKitIT(TestRedis redis) {
		RedisTestKitIT.redis = redis;
	}

	@DynamicPropertySource
	static void redis(DynamicPropertyRegistry registry) {
		registry.add("spring.data.redis.url", () -> redis.uri());
	}

	@AfterAll
	static void deleteTheOtherPrefixesKey() {
		if (redis != null) {
			redis.commands().del(OTHER_PREFIX_KEY);
		}
	}

	@Test
	@Order(1)
	void callsTheHourlyEndpointOnceOnRedis() {
		assertThat(this.store).isInstanceOf(RedisRateLimitStore.class);
		assertThat(this.mvc.get().uri("/hourly")).hasStatusOk();
		redis.commands().set(OTHER_PREFIX_KEY, "1", SetArgs.Builder.ex(600));
	}

	@Test
	@Order(2)
	void callsItOnceAgainAndLeavesTheKeysOfAnotherPrefixAlone() {
		assertThat(this.mvc.get().uri("/hourly")).hasStatusOk();
		assertThat(redis.commands().exists(OTHER_PREFIX_KEY)).isOne();
	}

	@Test
	@Order(3)
	void servesAgainOnceTheManualClockHasMovedAnHour() {
		assertThat(this.mvc.get().uri("/hourly")).hasStatusOk();
		assertThat(this.mvc.get().uri("/hourly")).hasStatus(429).hasHeader("Retry-After", "3600");
		this.clock.advance(Duration.ofHours(1));
		assertThat(this.mvc.get().uri("/hourly")).hasStatusOk();
	}

}
