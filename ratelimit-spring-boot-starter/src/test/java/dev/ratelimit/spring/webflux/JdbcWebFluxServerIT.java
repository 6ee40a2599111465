package dev.ratelimit.spring.webflux;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import dev.ratelimit.core.jdbc.JdbcRateLimitStore;
import dev.ratelimit.core.testing.BlockingCallsFail;
import dev.ratelimit.core.testing.PostgresExtension;
import dev.ratelimit.core.testing.TestPostgres;
import dev.ratelimit.spring.RateLimited;
import dev.ratelimit.spring.TestApplication;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import reactor.core.publisher.Mono;

import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Import;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests the PostgreSQL store under WebFlux on a real Reactor Netty server and a real PostgreSQL, with BlockHound
 * failing any blocking call on a non-blocking thread: JDBC waits on the store's own threads, never on an event
 * loop, and the limits answer with the headers of every other store.
 */
@ExtendWith({ BlockingCallsFail.class, PostgresExtension.class })
class JdbcWebFluxServerIT {

	private final HttpClient http = HttpClient.newHttpClient();

	private TestPostgres postgres;

	@BeforeEach
	void usePostgres(TestPostgres postgres) {
		this.postgres = postgres;
	}

	@Test
	void limitsWithoutBlockingAnEventLoop() throws Exception {
		try (ConfigurableApplicationContext context = start()) {
			assertThat(context.getBeansOfType(JdbcRateLimitStore.class)).hasSize(1);
			int port = port(context);
			for (int i = 0; i < 3; i++) {
				HttpResponse<String> allowed = get(port);
				assertThat(allowed.statusCode()).isEqualTo(200);
				assertThat(allowed.headers().firstValue("RateLimit-Policy")).hasValue("\"limited\";q=3;w=3600");
				assertThat(allowed.headers().firstValue("RateLimit"))
					.hasValue("\"limited\";r=" + (2 - i) + ";t=" + (i + 1) * 1200);
			}
			HttpResponse<String> rejected = get(port);
			assertThat(rejected.statusCode()).isEqualTo(429);
			assertThat(rejected.headers().firstValue("Retry-After")).hasValue("1200");
			assertThat(rejected.headers().firstValue("Content-Type")).hasValue("application/problem+json");
		}
	}

	@Test
	void answersManySimultaneousRequestsWithoutBlockingAnEventLoop() throws Exception {
		try (ConfigurableApplicationContext context = start()) {
			int port = port(context);
			List<CompletableFuture<HttpResponse<String>>> responses = new ArrayList<>();
			for (int i = 0; i < 50; i++) {
				responses.add(this.http.sendAsync(request(port, "/many"), HttpResponse.BodyHandlers.ofString()));
			}
			List<Integer> statuses = new ArrayList<>();
			for (CompletableFuture<HttpResponse<String>> response : responses) {
				statuses.add(response.get().statusCode());
			}
			assertThat(statuses).containsOnly(200, 429);
			assertThat(statuses.stream().filter((status) -> status == 200)).hasSize(20);
		}
	}

	private ConfigurableApplicationContext start() {
		return new SpringApplicationBuilder(App.class).web(WebApplicationType.REACTIVE)
			.run("--server.port=0", "--spring.main.banner-mode=off", "--ratelimit.store=jdbc",
					"--spring.datasource.url=" + this.postgres.url(),
					"--ratelimit.jdbc.key-prefix=webflux-jdbc-" + System.nanoTime() + ":");
	}

	private static int port(ConfigurableApplicationContext context) {
		return ((WebServerApplicationContext) context).getWebServer().getPort();
	}

	private HttpResponse<String> get(int port) throws Exception {
		return this.http.send(request(port, "/limited"), HttpResponse.BodyHandlers.ofString());
	}

	private static HttpRequest request(int port, String path) {
		// an answer that never comes fails the test rather than hanging the build
		return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
			.timeout(Duration.ofSeconds(20))
			.build();
	}

	@TestApplication
	@Import(LimitedController.class)
	static class App {

	}

	@RestController
	static class LimitedController {

		@GetMapping("/limited")
		@RateLimited(limit = 3, window = "1h", name = "limited")
		Mono<String> limited() {
			return Mono.just("limited");
		}

		@GetMapping("/many")
		@RateLimited(limit = 20, window = "1h", name = "many")
		Mono<String> many() {
			return Mono.just("many");
		}

	}

}
