package dev.ratelimit.spring.autoconfigure;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpHeaders;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import dev.ratelimit.core.jdbc.JdbcRateLimitStore;
import dev.ratelimit.core.memory.InMemoryRateLimitStore;
import dev.ratelimit.core.testing.PostgresExtension;
import dev.ratelimit.core.testing.TestPostgres;
import dev.ratelimit.spring.RateLimited;
import dev.ratelimit.spring.TestApplication;
import dev.ratelimit.spring.changes.internal.PolicyChanges;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Import;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests the PostgreSQL store on a real server and a real PostgreSQL, through Spring Boot's own DataSource: a
 * limited endpoint answers as it does on the in-memory store, header for header, an application whose
 * DataSource is PostgreSQL's, without Redis, keeps its limits there without being told to, and a runtime change
 * reaches every instance on the table.
 */
@ExtendWith(PostgresExtension.class)
class JdbcStoreServerIT {

	private final HttpClient http = HttpClient.newHttpClient();

	private TestPostgres postgres;

	@BeforeEach
	void usePostgres(TestPostgres postgres) {
		this.postgres = postgres;
	}

	@Test
	void rejectsTheFourthRequestWith429AndTheHeadersOfTheInMemoryStore() throws Exception {
		List<HttpResponse<String>> inMemory = fourRequests("--ratelimit.store=memory");
		String prefix = "jdbc-it-" + System.nanoTime() + ":";
		List<HttpResponse<String>> inPostgres = fourRequests("--ratelimit.store=jdbc",
				"--ratelimit.jdbc.key-prefix=" + prefix);
		assertThat(inPostgres).extracting(HttpResponse::statusCode).containsExactly(200, 200, 200, 429);
		for (int i = 0; i < 4; i++) {
			assertThat(rateLimitHeaders(inPostgres.get(i).headers())).as("request %d", i)
				.isEqualTo(rateLimitHeaders(inMemory.get(i).headers()))
				.isNotEmpty();
		}
		assertThat(inPostgres.get(3).headers().firstValue("Retry-After")).hasValue("1200");
		assertThat(inPostgres.get(3).headers().firstValue("Content-Type")).hasValue("application/problem+json");
		assertThat(this.postgres.queryForLong(
				"SELECT count(*) FROM ratelimit_state WHERE key LIKE '" + prefix + "ip:%'")).isEqualTo(1);
	}

	@Test
	void keepsTheLimitsOfAPostgresDataSourceWithoutRedisInPostgres() throws Exception {
		// Spring Data Redis is on the tests' class path: without its connection, the application has no Redis
		try (ConfigurableApplicationContext context = start(
				"--spring.autoconfigure.exclude=" + DataRedisAutoConfiguration.class.getName(),
				"--ratelimit.jdbc.key-prefix=jdbc-auto-" + System.nanoTime() + ":")) {
			assertThat(context.getBeansOfType(JdbcRateLimitStore.class)).hasSize(1);
			assertThat(context.getBeansOfType(InMemoryRateLimitStore.class)).isEmpty();
			int port = port(context);
			for (int i = 0; i < 3; i++) {
				assertThat(get(port).statusCode()).isEqualTo(200);
			}
			assertThat(get(port).statusCode()).isEqualTo(429);
		}
	}

	@Test
	void sharesARuntimeChangeWithEveryInstanceOnTheTableAndWithOnesThatStartLater() throws Exception {
		String prefix = "--ratelimit.jdbc.key-prefix=jdbc-changes-" + System.nanoTime() + ":";
		try (ConfigurableApplicationContext changing = start("--ratelimit.store=jdbc", prefix);
				ConfigurableApplicationContext following = start("--ratelimit.store=jdbc", prefix)) {
			changing.getBean(PolicyChanges.class).change("limited", 5L, null, null);
			awaitLimit(following, 5);
			assertThat(get(port(following)).headers().firstValue("RateLimit-Policy")).hasValue("\"limited\";q=5;w=3600");
			try (ConfigurableApplicationContext later = start("--ratelimit.store=jdbc", prefix)) {
				assertThat(later.getBean(PolicyChanges.class).current("limited").limit()).isEqualTo(5);
			}
			changing.getBean(PolicyChanges.class).remove("limited");
			awaitLimit(following, 3);
		}
	}

	@Test
	void deletesInOneRoundTheIdleRowsOfMoreHostileKeysThanOneBatch() {
		String prefix = "jdbc-cleanup-" + System.nanoTime() + ":";
		try (JdbcRateLimitStore store = JdbcRateLimitStore.builder(this.postgres.dataSource())
			.keyPrefix(prefix)
			.build()) {
			int idle = 25 * JdbcStoreThreads.CLEANUP_BATCH + 1;
			// keys seen once, long full again: as a client that sends every request under a new key leaves them
			this.postgres.execute("INSERT INTO ratelimit_state (key, policy, expires_at) SELECT '" + prefix
					+ "' || i, 'limited', 0 FROM generate_series(1, " + idle + ") AS i");
			JdbcStoreThreads.cleanUp(store, Duration.ofMinutes(1).toNanos());
			assertThat(this.postgres.queryForLong(
					"SELECT count(*) FROM ratelimit_state WHERE starts_with(key, '" + prefix + "')")).isZero();
		}
	}

	/** Waits up to 10 s for the application to apply a limit of {@code limit} to the policy. */
	private static void awaitLimit(ConfigurableApplicationContext context, long limit) {
		PolicyChanges changes = context.getBean(PolicyChanges.class);
		long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
		while (changes.current("limited").limit() != limit) {
			assertThat(System.nanoTime() - deadline).as("the change reaches the instance").isNegative();
			Thread.onSpinWait();
		}
	}

	private List<HttpResponse<String>> fourRequests(String... arguments) throws Exception {
		try (ConfigurableApplicationContext context = start(arguments)) {
			int port = port(context);
			List<HttpResponse<String>> responses = new ArrayList<>();
			for (int i = 0; i < 4; i++) {
				responses.add(get(port));
			}
			return responses;
		}
	}

	private static List<String> rateLimitHeaders(HttpHeaders headers) {
		List<String> values = new ArrayList<>();
		headers.map().forEach((name, value) -> {
			if (name.toLowerCase().startsWith("ratelimit") || name.equalsIgnoreCase("retry-after")) {
				values.add(name.toLowerCase() + ": " + value);
			}
		});
		values.sort(null);
		return values;
	}

	private ConfigurableApplicationContext start(String... arguments) {
		List<String> args = new ArrayList<>(List.of("--server.port=0", "--spring.main.banner-mode=off",
				"--spring.datasource.url=" + this.postgres.url()));
		args.addAll(List.of(arguments));
		return new SpringApplicationBuilder(App.class).web(WebApplicationType.SERVLET)
			.run(args.toArray(String[]::new));
	}

	private static int port(ConfigurableApplicationContext context) {
		return ((WebServerApplicationContext) context).getWebServer().getPort();
	}

	private HttpResponse<String> get(int port) throws Exception {
		HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/limited"))
			.timeout(Duration.ofSeconds(10))
			.build();
		return this.http.send(request, HttpResponse.BodyHandlers.ofString());
	}

	@TestApplication
	@Import(LimitedController.class)
	static class App {

	}

	@RestController
	static class LimitedController {

		@GetMapping("/limited")
		@RateLimited(limit = 3, window = "1h", name = "limited")
		String limited() {
			return "limited";
		}

	}

}
