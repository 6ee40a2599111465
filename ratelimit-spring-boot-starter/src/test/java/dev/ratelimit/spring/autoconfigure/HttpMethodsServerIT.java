package dev.ratelimit.spring.autoconfigure;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.EnumMap;
import java.util.Map;

import dev.ratelimit.core.ManualTimeSource;
import dev.ratelimit.spring.RateLimited;
import dev.ratelimit.spring.TestApplication;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests on a real server, on Spring MVC and on WebFlux, that every method costs what its handler costs:
 * {@code HEAD}, which both serve with the {@code GET} handler, counts as a {@code GET}; {@code OPTIONS}, which both
 * answer themselves, and {@code POST} to a {@code GET} mapping, which both refuse with 405, reach no limited
 * handler and cost nothing, unless a rule names every method.
 */
class HttpMethodsServerIT {

	private static final Map<WebApplicationType, ConfigurableApplicationContext> contexts = new EnumMap<>(
			WebApplicationType.class);

	private final HttpClient http = HttpClient.newHttpClient();

	@AfterAll
	static void stop() {
		contexts.values().forEach(ConfigurableApplicationContext::close);
		contexts.clear();
	}

	@ParameterizedTest
	@EnumSource(value = WebApplicationType.class, names = { "SERVLET", "REACTIVE" })
	void countsHeadAsGetOnAnAnnotatedHandler(WebApplicationType stack) throws Exception {
		assertHeadCountsAsGet(stack, "/annotated", "annotated");
	}

	@ParameterizedTest
	@EnumSource(value = WebApplicationType.class, names = { "SERVLET", "REACTIVE" })
	void countsHeadAsGetUnderARuleForGet(WebApplicationType stack) throws Exception {
		assertHeadCountsAsGet(stack, "/ruled", "ruled");
	}

	@ParameterizedTest
	@EnumSource(value = WebApplicationType.class, names = { "SERVLET", "REACTIVE" })
	void countsEveryServedMethodUnderARuleForAllMethods(WebApplicationType stack) throws Exception {
		assertRemaining(send(stack, "OPTIONS", "/open"), 200, "open", 2);
		assertRemaining(send(stack, "HEAD", "/open"), 200, "open", 1);
		assertUncounted(send(stack, "POST", "/open"), 405);
		assertRemaining(send(stack, "GET", "/open"), 200, "open", 0);
		assertThat(send(stack, "GET", "/open").statusCode()).isEqualTo(429);
	}

	private void assertHeadCountsAsGet(WebApplicationType stack, String path, String policy) throws Exception {
		assertRemaining(send(stack, "HEAD", path), 200, policy, 2);
		assertUncounted(send(stack, "OPTIONS", path), 200);
		assertUncounted(send(stack, "POST", path), 405);
		assertRemaining(send(stack, "GET", path), 200, policy, 1);
		assertRemaining(send(stack, "HEAD", path), 200, policy, 0);
		HttpResponse<Void> refused = send(stack, "HEAD", path);
		assertThat(refused.statusCode()).isEqualTo(429);
		assertThat(refused.headers().firstValue("Retry-After")).isPresent();
		assertThat(send(stack, "GET", path).statusCode()).isEqualTo(429);
	}

	private static void assertRemaining(HttpResponse<Void> response, int status, String policy, int remaining) {
		assertThat(response.statusCode()).as(response.request().method()).isEqualTo(status);
		assertThat(response.headers().firstValue("RateLimit")).as(response.request().method())
			.hasValue("\"" + policy + "\";r=" + remaining + ";t=" + (3 - remaining) * 20);
	}

	private static void assertUncounted(HttpResponse<Void> response, int status) {
		assertThat(response.statusCode()).as(response.request().method()).isEqualTo(status);
		assertThat(response.headers().firstValue("RateLimit")).as(response.request().method()).isEmpty();
	}

	private HttpResponse<Void> send(WebApplicationType stack, String method, String path) throws Exception {
		HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port(stack) + path))
			.method(method, HttpRequest.BodyPublishers.noBody())
			.build();
		return this.http.send(request, HttpResponse.BodyHandlers.discarding());
	}

	private static int port(WebApplicationType stack) {
		ConfigurableApplicationContext context = contexts.computeIfAbsent(stack, (started) -> {
			SpringApplication application = new SpringApplication(App.class);
			application.setWebApplicationType(started);
			return application.run("--server.port=0", "--server.address=127.0.0.1", "--ratelimit.rules[0].path=/ruled",
					"--ratelimit.rules[0].methods=GET", "--ratelimit.rules[0].limit=3", "--ratelimit.rules[0].window=1m",
					"--ratelimit.rules[0].name=ruled", "--ratelimit.rules[1].path=/open", "--ratelimit.rules[1].limit=3",
					"--ratelimit.rules[1].window=1m", "--ratelimit.rules[1].name=open");
		});
		return ((WebServerApplicationContext) context).getWebServer().getPort();
	}

	@TestApplication
	@Import(MethodsController.class)
	static class App {

		@Bean
		ManualTimeSource timeSource() {
			return new ManualTimeSource();
		}

	}

	@RestController
	static class MethodsController {

		@GetMapping("/annotated")
		@RateLimited(limit = 3, window = "1m", name = "annotated")
		String annotated() {
			return "annotated";
		}

		@GetMapping("/ruled")
		String ruled() {
			return "ruled";
		}

		@GetMapping("/open")
		String open() {
			return "open";
		}

	}

}
