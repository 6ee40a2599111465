package dev.ratelimit.spring.autoconfigure;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;

import dev.ratelimit.core.ManualTimeSource;
import dev.ratelimit.spring.RateLimited;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.security.autoconfigure.UserDetailsServiceAutoConfiguration;
import org.springframework.boot.security.autoconfigure.actuate.web.servlet.ManagementWebSecurityAutoConfiguration;
import org.springframework.boot.security.autoconfigure.web.servlet.ServletWebSecurityAutoConfiguration;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests on a real server that every method costs what its handler costs: {@code HEAD}, which Spring MVC serves
 * with the {@code GET} handler, counts as a {@code GET}; {@code OPTIONS}, which Spring MVC answers itself, and
 * {@code POST} to a {@code GET} mapping, which it refuses with 405, reach no limited handler and cost nothing,
 * unless a rule names every method.
 */
class HttpMethodsServerIT {

	private static ConfigurableApplicationContext context;

	private static int port;

	private final HttpClient http = HttpClient.newHttpClient();

	@BeforeAll
	static void start() {
		context = SpringApplication.run(App.class, "--server.port=0", "--server.address=127.0.0.1",
				"--ratelimit.rules[0].path=/ruled", "--ratelimit.rules[0].methods=GET", "--ratelimit.rules[0].limit=3",
				"--ratelimit.rules[0].window=1m", "--ratelimit.rules[0].name=ruled", "--ratelimit.rules[1].path=/open",
				"--ratelimit.rules[1].limit=3", "--ratelimit.rules[1].window=1m", "--ratelimit.rules[1].name=open");
		port = ((WebServerApplicationContext) context).getWebServer().getPort();
	}

	@AfterAll
	static void stop() {
		context.close();
	}

	@Test
	void countsHeadAsGetOnAnAnnotatedHandler() throws Exception {
		assertHeadCountsAsGet("/annotated", "annotated");
	}

	@Test
	void countsHeadAsGetUnderARuleForGet() throws Exception {
		assertHeadCountsAsGet("/ruled", "ruled");
	}

	@Test
	void countsEveryServedMethodUnderARuleForAllMethods() throws Exception {
		assertRemaining(send("OPTIONS", "/open"), 200, "open", 2);
		assertRemaining(send("HEAD", "/open"), 200, "open", 1);
		assertUncounted(send("POST", "/open"), 405);
		assertRemaining(send("GET", "/open"), 200, "open", 0);
		assertThat(send("GET", "/open").statusCode()).isEqualTo(429);
	}

	private void assertHeadCountsAsGet(String path, String policy) throws Exception {
		assertRemaining(send("HEAD", path), 200, policy, 2);
		assertUncounted(send("OPTIONS", path), 200);
		assertUncounted(send("POST", path), 405);
		assertRemaining(send("GET", path), 200, policy, 1);
		assertRemaining(send("HEAD", path), 200, policy, 0);
		HttpResponse<Void> refused = send("HEAD", path);
		assertThat(refused.statusCode()).isEqualTo(429);
		assertThat(refused.headers().firstValue("Retry-After")).isPresent();
		assertThat(send("GET", path).statusCode()).isEqualTo(429);
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

	private HttpResponse<Void> send(String method, String path) throws Exception {
		HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
			.method(method, HttpRequest.BodyPublishers.noBody())
			.build();
		return this.http.send(request, HttpResponse.BodyHandlers.discarding());
	}

	@SpringBootConfiguration(proxyBeanMethods = false)
	// Spring Security is on the test classpath for BeforeSecurityServerIT; it would secure every endpoint here
	@EnableAutoConfiguration(
			exclude = { ServletWebSecurityAutoConfiguration.class, ManagementWebSecurityAutoConfiguration.class,
					UserDetailsServiceAutoConfiguration.class })
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
