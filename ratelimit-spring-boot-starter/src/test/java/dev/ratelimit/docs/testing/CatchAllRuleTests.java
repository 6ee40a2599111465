package dev.ratelimit.docs.testing;

import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webmvc.test.autoconfigure.AutoConfigureMockMvc;
import org.springframework.boot.webtestclient.autoconfigure.AutoConfigureWebTestClient;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.test.web.servlet.assertj.MockMvcTester;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What docs/keys.md says of a catch-all rule and Actuator's health checks: on WebFlux the rule counts them, and
 * its {@code exempt-if} on their path keeps them out of it; on Spring MVC rules never reach Actuator's
 * endpoints.
 */
class CatchAllRuleTests {

	@Nested
	@SpringBootTest(properties = { "management.endpoints.web.exposure.include=health",
			"management.health.redis.enabled=false", "ratelimit.rules[0].path=/**", "ratelimit.rules[0].limit=1",
			"ratelimit.rules[0].window=1m", "ratelimit.rules[0].name=catch-all" })
	@AutoConfigureMockMvc
	class OnSpringMvc {

		@Autowired
		MockMvcTester mvc;

		@Test
		void answersEveryHealthCheck() {
			for (int i = 0; i < 3; i++) {
				assertThat(this.mvc.get().uri("/actuator/health")).hasStatusOk();
			}
		}

	}

	@Nested
	@SpringBootTest(properties = { "spring.main.web-application-type=reactive",
			"management.endpoints.web.exposure.include=health", "management.health.redis.enabled=false",
			"ratelimit.rules[0].path=/**", "ratelimit.rules[0].limit=1", "ratelimit.rules[0].window=1m",
			"ratelimit.rules[0].name=catch-all" })
	@AutoConfigureWebTestClient
	class OnWebFluxWithoutAnExemption {

		@Autowired
		WebTestClient client;

		@Test
		void refusesTheSecondHealthCheck() {
			this.client.get().uri("/actuator/health").exchange().expectStatus().isOk();
			this.client.get().uri("/actuator/health").exchange().expectStatus().isEqualTo(429);
		}

	}

	@Nested
	@SpringBootTest(properties = { "spring.main.web-application-type=reactive",
			"management.endpoints.web.exposure.include=health", "management.health.redis.enabled=false",
			"ratelimit.rules[0].path=/**", "ratelimit.rules[0].limit=1", "ratelimit.rules[0].window=1m",
			"ratelimit.rules[0].name=catch-all",
			"ratelimit.rules[0].exempt-if=spel:#request.getRequestURI().startsWith('/actuator/health')" })
	@AutoConfigureWebTestClient
	class OnWebFluxWithTheExemption {

		@Autowired
		WebTestClient client;

		@Test
		void answersEveryHealthCheck() {
			for (int i = 0; i < 3; i++) {
				this.client.get().uri("/actuator/health").exchange().expectStatus().isOk();
			}
		}

	}

}
