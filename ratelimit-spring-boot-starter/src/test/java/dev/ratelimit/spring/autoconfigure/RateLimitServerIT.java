package dev.ratelimit.spring.autoconfigure;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;

import dev.ratelimit.core.ManualTimeSource;
import dev.ratelimit.spring.RateLimited;
import dev.ratelimit.spring.TestApplication;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;

/**
 * Tests on a real server what a mock one does not do: error dispatches, a context path, and the console report
 * of a configuration mistake.
 */
@ExtendWith({ QuietOutput.class, OutputCaptureExtension.class })
class RateLimitServerIT {

	private final HttpClient http = HttpClient.newHttpClient();

	@Test
	void neverLimitsTheErrorDispatchOfARequest(CapturedOutput output) throws Exception {
		try (ConfigurableApplicationContext context = SpringApplication.run(App.class, "--server.port=0",
				"--ratelimit.rules[0].path=/**", "--ratelimit.rules[0].limit=2", "--ratelimit.rules[0].window=1m")) {
			int port = ((WebServerApplicationContext) context).getWebServer().getPort();
			// each failing request is dispatched again to /error, which the rule matches too
			assertThat(status(port, "/boom")).isEqualTo(500);
			assertThat(status(port, "/boom")).isEqualTo(500);
			assertThat(status(port, "/boom")).isEqualTo(429);
			// the two failures that reached the handler, logged by Tomcat; the refused one never ran it
			assertThat(output.getAll().split("\njava.lang.IllegalStateException: boom", -1)).hasSize(3);
		}
	}

	@ParameterizedTest
	@EnumSource(value = WebApplicationType.class, names = { "SERVLET", "REACTIVE" })
	void reportsAMistakeWithoutAStackTrace(WebApplicationType type, CapturedOutput output) {
		SpringApplication application = new SpringApplication(BadApp.class);
		application.setWebApplicationType(type);
		assertThatException().isThrownBy(() -> application.run("--server.port=0"));
		assertThat(output).contains("APPLICATION FAILED TO START", "Description:",
				"Invalid @RateLimited on " + BadController.class.getName()
						+ ".get(): window '10 seconds' is not a duration",
				"Action:", "Fix the declaration, or its values under ratelimit.policies.BadController.get.")
			.doesNotContain("\tat dev.ratelimit");
	}

	@ParameterizedTest
	@EnumSource(value = WebApplicationType.class, names = { "SERVLET", "REACTIVE" })
	void limitsARequestWithABadlyEncodedKeyWithoutAStackTrace(WebApplicationType type, CapturedOutput output)
			throws Exception {
		SpringApplication application = new SpringApplication(App.class);
		application.setWebApplicationType(type);
		try (ConfigurableApplicationContext context = application.run("--server.port=0")) {
			int port = ((WebServerApplicationContext) context).getWebServer().getPort();
			for (int i = 0; i < 20; i++) {
				HttpResponse<Void> response = send(port, "/tenant?tenant=%ff");
				assertThat(response.statusCode()).isEqualTo((i < 10) ? 200 : 429);
				assertThat(response.headers().firstValue("RateLimit-Policy")).hasValue("\"tenant\";q=10;w=60");
			}
			// Tomcat cannot decode the parameter: the key falls back to the address, which is logged once; WebFlux
			// decodes the byte as U+FFFD, a key like any other
			assertThat(output.getAll().split("Could not compute the key", -1))
				.hasSize((type == WebApplicationType.SERVLET) ? 2 : 1);
			assertThat(output).doesNotContain("\tat ");
		}
	}

	@Test
	void matchesRulesAndAnnotationsWithinTheContextPath() throws Exception {
		try (ConfigurableApplicationContext context = SpringApplication.run(App.class, "--server.port=0",
				"--server.servlet.context-path=/api", "--ratelimit.rules[0].path=/plain",
				"--ratelimit.rules[0].limit=1", "--ratelimit.rules[0].window=1m", "--ratelimit.rules[0].name=plain",
				"--ratelimit.rules[1].path=/tenant", "--ratelimit.rules[1].limit=2", "--ratelimit.rules[1].window=1m",
				"--ratelimit.rules[1].name=early", "--ratelimit.rules[1].before-security=true")) {
			int port = ((WebServerApplicationContext) context).getWebServer().getPort();
			assertThat(status(port, "/api/plain")).isEqualTo(200);
			assertThat(status(port, "/api/plain")).isEqualTo(429);
			// the rule decided before security, then the annotation, each in a line of its own
			assertThat(send(port, "/api/tenant?tenant=a").headers().allValues("RateLimit-Policy"))
				.containsExactly("\"early\";q=2;w=60", "\"tenant\";q=10;w=60");
		}
	}

	private int status(int port, String path) throws Exception {
		return send(port, path).statusCode();
	}

	private HttpResponse<Void> send(int port, String path) throws Exception {
		HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).build();
		return this.http.send(request, HttpResponse.BodyHandlers.discarding());
	}

	@TestApplication
	@Import(BoomController.class)
	static class App {

		@Bean
		ManualTimeSource timeSource() {
			return new ManualTimeSource();
		}

	}

	@RestController
	static class BoomController {

		@GetMapping("/boom")
		String boom() {
			throw new IllegalStateException("boom");
		}

		@GetMapping("/plain")
		String plain() {
			return "plain";
		}

		@GetMapping("/tenant")
		@RateLimited(limit = 10, window = "1m", name = "tenant", key = "spel:#request.getParameter('tenant')")
		String tenant() {
			return "tenant";
		}

	}

	@TestApplication
	@Import(BadController.class)
	static class BadApp {

	}

	@RestController
	static class BadController {

		@GetMapping("/bad")
		@RateLimited(limit = 10, window = "10 seconds")
		String get() {
			return "never";
		}

	}

}
