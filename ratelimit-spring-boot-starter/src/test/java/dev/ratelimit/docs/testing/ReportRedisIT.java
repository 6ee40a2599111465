package dev.ratelimit.docs.testing;

import dev.ratelimit.spring.test.ManualClock;
import org.junit.jupiter.api.Test;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.junit.jupiter.Container;
import org.testcontainers.junit.jupiter.Testcontainers;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.testcontainers.service.connection.ServiceConnection;
import org.springframework.boot.webmvc.test.autoconfigure.AutoConfigureMockMvc;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.web.servlet.assertj.MockMvcTester;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The recipe of docs/testing.md for Redis in a container, through {@code @ServiceConnection}; skipped without
 * Docker.
 */
@Testcontainers(disabledWithoutDocker = true)
@SpringBootTest(properties = { "ratelimit.store=redis", "ratelimit.redis.key-prefix=test:${random.uuid}:" })
@AutoConfigureMockMvc
@ManualClock
@DirtiesContext
class ReportRedisIT {

	@Container
	@ServiceConnection(name = "redis")
	static GenericContainer<?> redis = new GenericContainer<>("redis:7-alpine").withExposedPorts(6379);

	@Autowired
	MockMvcTester mvc;

	@Test
	void answers200Then429() {
		assertThat(this.mvc.get().uri("/report")).hasStatusOk();
		assertThat(this.mvc.get().uri("/report")).hasStatus(429);
	}

}
