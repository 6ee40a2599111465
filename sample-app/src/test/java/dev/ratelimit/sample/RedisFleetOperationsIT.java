package dev.ratelimit.sample;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Predicate;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import dev.ratelimit.core.testing.RedisExtension;
import dev.ratelimit.core.testing.TestRedis;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIf;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A fleet of sample instances on one Redis, on real ports and Redis' own clock: a runtime change made on one
 * instance reaches every other within two seconds and an instance that starts later applies it at once; a
 * reset made on one instance frees the key on every other, including the denial it keeps locally; removing the
 * change brings the declared limit back everywhere.
 */
@ExtendWith(RedisExtension.class)
@EnabledIf("dev.ratelimit.sample.RedisSampleIT#redisAvailable")
class RedisFleetOperationsIT {

	/** How soon every instance applies what another did: about a heartbeat, a second. */
	private static final Duration PROPAGATION = Duration.ofSeconds(2);

	private static final String GCRA = "/actuator/ratelimit/DemoController.gcra";

	private static final Pattern LIMIT = Pattern.compile("\"limit\":(\\d+)");

	private final String prefix = "fleet-it:" + Long.toString(ThreadLocalRandom.current().nextLong() >>> 1, 36) + ":";

	private final List<ConfigurableApplicationContext> instances = new ArrayList<>();

	private final HttpClient http = HttpClient.newHttpClient();

	private TestRedis redis;

	@BeforeEach
	void useRedis(TestRedis redis) {
		this.redis = redis;
	}

	@AfterEach
	void stopInstances() {
		this.instances.forEach(ConfigurableApplicationContext::close);
	}

	@Test
	void appliesAChangeAndAResetOnEveryInstanceOfTheFleet() throws Exception {
		int first = start();
		int second = start();
		assertThat(admin("POST", first, GCRA, "{\"limit\": 2}").statusCode()).isEqualTo(200);
		Duration seen = within(PROPAGATION, () -> limit(second), (limit) -> limit == 2);
		assertThat(seen).as("the second instance applied the change").isLessThanOrEqualTo(PROPAGATION);
		LoopbackClient client = new LoopbackClient("127.0.0.11", second);
		assertThat(client.get("/demo/gcra").header("RateLimit-Policy")).isEqualTo("\"DemoController.gcra\";q=2;w=10");
		assertThat(client.get("/demo/gcra").status()).isEqualTo(200);
		assertThat(client.get("/demo/gcra").status()).isEqualTo(429);
		assertThat(client.get("/demo/gcra").status()).as("denied again, locally").isEqualTo(429);

		int third = start();
		assertThat(limit(third)).as("an instance started after the change").isEqualTo(2);
		assertThat(new LoopbackClient("127.0.0.11", third).get("/demo/gcra").status())
			.as("the fleet shares the key's state").isEqualTo(429);

		assertThat(admin("DELETE", first, GCRA + "/ip:127.0.0.11", null).statusCode()).isEqualTo(200);
		seen = within(PROPAGATION, () -> client.get("/demo/gcra").status(), (status) -> status == 200);
		assertThat(seen).as("the second instance forgot its local denial").isLessThanOrEqualTo(PROPAGATION);

		assertThat(admin("DELETE", first, GCRA, null).statusCode()).isEqualTo(200);
		for (int port : List.of(second, third)) {
			assertThat(within(PROPAGATION, () -> limit(port), (limit) -> limit == 10))
				.as("back to the declared limit on port %d", port)
				.isLessThanOrEqualTo(PROPAGATION);
		}
	}

	/** Starts an instance of the sample on the test's Redis and the fleet's key prefix; returns its port. */
	private int start() {
		ConfigurableApplicationContext context = new SpringApplicationBuilder(SampleApplication.class)
			.profiles("redis")
			.properties("server.port=0", "spring.data.redis.url=" + this.redis.uri(),
					"ratelimit.redis.key-prefix=" + this.prefix, "spring.main.banner-mode=off")
			.run();
		this.instances.add(context);
		return Integer.parseInt(context.getEnvironment().getProperty("local.server.port"));
	}

	private long limit(int port) {
		String body = admin("GET", port, GCRA, null).body();
		Matcher limit = LIMIT.matcher(body);
		assertThat(limit.find()).as(body).isTrue();
		return Long.parseLong(limit.group(1));
	}

	private HttpResponse<String> admin(String method, int port, String path, String json) {
		HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
			.header("Authorization", "Basic " + Base64.getEncoder()
				.encodeToString("admin:admin-password".getBytes(StandardCharsets.UTF_8)))
			.timeout(Duration.ofSeconds(10));
		if (json != null) {
			request.header("Content-Type", "application/json")
				.method(method, HttpRequest.BodyPublishers.ofString(json));
		}
		else {
			request.method(method, HttpRequest.BodyPublishers.noBody());
		}
		try {
			return this.http.send(request.build(), HttpResponse.BodyHandlers.ofString());
		}
		catch (Exception ex) {
			throw new IllegalStateException(method + " " + path + " failed", ex);
		}
	}

	/**
	 * Asks until the answer passes or the bound has passed twice over, 50 ms apart; returns how long it took,
	 * failing if it never passed.
	 */
	private static <T> Duration within(Duration bound, Supplier<T> ask, Predicate<T> passes)
			throws InterruptedException {
		long start = System.nanoTime();
		long deadline = start + 2 * bound.toNanos();
		T answer = ask.get();
		while (!passes.test(answer)) {
			assertThat(System.nanoTime() - deadline).as("still %s after %s", answer, bound.multipliedBy(2)).isNegative();
			Thread.sleep(50);
			answer = ask.get();
		}
		return Duration.ofNanos(System.nanoTime() - start);
	}

}
