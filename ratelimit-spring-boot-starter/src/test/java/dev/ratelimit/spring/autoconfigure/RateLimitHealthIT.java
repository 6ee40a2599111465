package dev.ratelimit.spring.autoconfigure;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;

import dev.ratelimit.core.redis.RedisRateLimitStore;
import dev.ratelimit.core.testing.RedisServerProcess;
import dev.ratelimit.core.testing.TestRedis;
import dev.ratelimit.spring.RateLimited;
import dev.ratelimit.spring.TestApplication;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Import;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests {@code /actuator/health} on a real server against a real Redis that stops and starts again: UP with
 * Redis answering, UP or DOWN (as {@code ratelimit.health.down-when-failing} says) while the failure policy
 * decides, and UP again once Redis is back.
 */
@ExtendWith(QuietOutput.class)
class RateLimitHealthIT {

	/** Requests that a stopped Redis may take to switch the store to its failure policy. */
	private static final int MAX_REQUESTS_TO_SWITCH = 20;

	/** Longest a restarted Redis may take to be answering again: the client's reconnection, with room to spare. */
	private static final Duration RECOVERY = Duration.ofSeconds(5);

	private static final JsonMapper JSON = JsonMapper.builder().build();

	private final HttpClient http = HttpClient.newHttpClient();

	@ParameterizedTest
	@CsvSource({ "false, 200, UP", "true, 503, DOWN" })
	void reportsTheFailurePolicyInEffectWhileRedisIsStopped(boolean downWhenFailing, int failingStatus,
			String failingHealth) throws Exception {
		if (!RedisServerProcess.isAvailable()) {
			TestRedis.skipOrFail("there is no redis-server on the PATH to stop");
		}
		try (RedisServerProcess server = RedisServerProcess.start();
				ConfigurableApplicationContext context = SpringApplication.run(App.class, "--server.port=0",
						"--ratelimit.store=redis", "--spring.data.redis.url=" + server.uri(),
						"--ratelimit.health.down-when-failing=" + downWhenFailing,
						"--management.endpoint.health.show-details=always",
						// Spring Data Redis' own contributor would take the application down with Redis
						"--management.health.redis.enabled=false")) {
			int port = ((WebServerApplicationContext) context).getWebServer().getPort();
			RedisRateLimitStore store = context.getBean(RedisRateLimitStore.class);
			assertThat(get(port, "/limited").statusCode()).isEqualTo(200);
			assertThat(health(port, 200)).isEqualTo(
					json("{'status':'UP','details':{'store':'redis','redis':'answering','failurePolicy':'local',"
							+ "'failurePolicyDecisions':0,'fleetInstances':1}}"));
			Instant stopped = Instant.now().truncatedTo(ChronoUnit.MILLIS);
			server.stop();
			int sent = 0;
			while (sent < MAX_REQUESTS_TO_SWITCH && !store.failures().orElseThrow().status().failing()) {
				assertThat(get(port, "/limited").statusCode()).isEqualTo(200);
				sent++;
			}
			assertThat(store.failures().orElseThrow().status().failing()).isTrue();
			JsonNode failing = health(port, failingStatus);
			assertThat(failing.at("/status").asString()).isEqualTo(failingHealth);
			assertThat(failing.at("/details/redis").asString()).isEqualTo("failing");
			assertThat(failing.at("/details/failurePolicyDecisions").asLong()).isEqualTo(sent);
			assertThat(failing.at("/details/failurePolicyDecisionsDuringOutage").asLong()).isBetween(1L, (long) sent);
			assertThat(Instant.parse(failing.at("/details/failingSince").asString())).isBetween(stopped,
					Instant.now());
			server.restart();
			// the client reconnects within its longest reconnection delay; requests meanwhile fail at once, so
			// what bounds the wait is time, not a number of requests
			long recoveryEnd = System.nanoTime() + RECOVERY.toNanos();
			while (store.failures().orElseThrow().status().failing() && System.nanoTime() - recoveryEnd < 0) {
				assertThat(get(port, "/limited").statusCode()).isEqualTo(200);
				Thread.sleep(10);
			}
			JsonNode back = health(port, 200);
			assertThat(back.at("/status").asString()).isEqualTo("UP");
			assertThat(back.at("/details/redis").asString()).isEqualTo("answering");
			// and those of the requests sent while Redis restarted
			assertThat(back.at("/details/failurePolicyDecisions").asLong()).isGreaterThanOrEqualTo(sent);
			assertThat(back.at("/details").has("failingSince")).isFalse();
		}
	}

	/** The ratelimit contributor in /actuator/health, whose status the whole application's answer must have. */
	private JsonNode health(int port, int status) throws Exception {
		HttpResponse<String> response = get(port, "/actuator/health");
		assertThat(response.statusCode()).as(response.body()).isEqualTo(status);
		return JSON.readTree(response.body()).at("/components/ratelimit");
	}

	private static JsonNode json(String json) {
		return JSON.readTree(json.replace('\'', '"'));
	}

	private HttpResponse<String> get(int port, String path) throws Exception {
		HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).build();
		return this.http.send(request, HttpResponse.BodyHandlers.ofString());
	}

	@TestApplication
	@Import(LimitedController.class)
	static class App {

	}

	@RestController
	static class LimitedController {

		@GetMapping("/limited")
		@RateLimited(limit = 1000, window = "1h", name = "limited")
		String limited() {
			return "limited";
		}

	}

}
