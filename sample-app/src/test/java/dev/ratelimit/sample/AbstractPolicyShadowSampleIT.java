package dev.ratelimit.sample;

import java.nio.charset.StandardCharsets;
import java.util.Base64;

import dev.ratelimit.spring.test.ManualClock;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Import;
import org.springframework.test.context.ActiveProfiles;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Runs the sample application on a real server with its {@code shadow} profile, which puts the limit of
 * {@code /demo/gcra} and the rule of {@code /demo/yaml-only} in shadow mode and leaves every other limit
 * enforced.
 */
@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT)
@ActiveProfiles("shadow")
@ManualClock
@Import(ManualRelease.class)
abstract class AbstractPolicyShadowSampleIT {

	@Autowired
	private MeterRegistry registry;

	@LocalServerPort
	private int port;

	@Test
	void answersEveryRequestOverTheShadowLimitAndEnforcesTheOthers() {
		LoopbackClient client = new LoopbackClient("127.0.0.2", this.port);
		Decisions.assertShadowedGcra(this.registry, client);
		for (int i = 0; i < 10; i++) {
			assertThat(client.get("/demo/fixed-window").status()).isEqualTo(200);
		}
		LoopbackClient.Response rejected = client.get("/demo/fixed-window");
		assertThat(rejected.status()).isEqualTo(429);
		assertThat(rejected.header("Retry-After")).isNotNull();
		assertThat(rejected.body()).contains("\"policies\":[\"DemoController.fixedWindow\"]");
	}

	@Test
	void answersEveryRequestOverTheShadowRule() {
		LoopbackClient client = new LoopbackClient("127.0.0.3", this.port);
		long before = Decisions.count(this.registry, "yaml-only", "shadow_rejected");
		for (int i = 0; i < 5; i++) {
			LoopbackClient.Response response = client.get("/demo/yaml-only");
			assertThat(response.status()).as("request %d", i + 1).isEqualTo(200);
			assertThat(response.header("RateLimit")).isNull();
		}
		// 3 per 10 seconds: the fourth and the fifth would have been rejected
		assertThat(Decisions.count(this.registry, "yaml-only", "shadow_rejected") - before).isEqualTo(2);
	}

	@Test
	void tellsWhichPoliciesAreInShadowMode() {
		LoopbackClient.Response response = new LoopbackClient("127.0.0.4", this.port).get("/actuator/ratelimit",
				"Authorization", "Basic " + Base64.getEncoder().encodeToString("admin:admin-password".getBytes(StandardCharsets.UTF_8)));
		assertThat(response.status()).isEqualTo(200);
		assertThat(response.body()).contains("\"name\":\"DemoController.gcra\"")
			.containsPattern("\"DemoController\\.gcra\":\\{[^}]*\"mode\":\"shadow\"")
			.containsPattern("\"DemoController\\.fixedWindow\":\\{[^}]*\"mode\":\"enforced\"");
	}

}
