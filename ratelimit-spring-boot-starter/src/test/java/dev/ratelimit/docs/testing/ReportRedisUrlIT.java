package dev.ratelimit.docs.testing;

import dev.ratelimit.spring.test.ManualClock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webmvc.test.autoconfigure.AutoConfigureMockMvc;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.servlet.assertj.MockMvcTester;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The recipe of docs/testing.md for a Redis that the build or CI started, at {@code REDIS_URL}.
 */
@EnabledIfEnvironmentVariable(named = "REDIS_URL", matches = ".+")
@SpringBootTest(properties = { "ratelimit.store=redis", "ratelimit.redis.key-prefix=test:${random.uuid}:" })
@AutoConfigureMockMvc
@ManualClock
class ReportRedisUrlIT {

	@Autowired
	MockMvcTester mvc;

	@DynamicPropertySource
	static void redis(DynamicPropertyRegistry registry) {
		registry.add("spring.data.redis.url", () -> System.getenv("REDIS_URL"));
	}

	@Test
	void answers200Then429() {
		assertThat(this.mvc.get().uri("/report")).hasStatusOk();
		assertThat(this.mvc.get().uri("/report")).hasStatus(429);
	}

}
