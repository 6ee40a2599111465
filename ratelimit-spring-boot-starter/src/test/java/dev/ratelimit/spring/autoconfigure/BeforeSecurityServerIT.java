package dev.ratelimit.spring.autoconfigure;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

import dev.ratelimit.core.ManualTimeSource;
import dev.ratelimit.spring.RateLimited;
import dev.ratelimit.spring.webmvc.RateLimitWebMvcAutoConfiguration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.boot.web.servlet.AbstractFilterRegistrationBean;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.http.HttpStatus;
import org.springframework.security.config.Customizer;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.provisioning.InMemoryUserDetailsManager;
import org.springframework.security.web.SecurityFilterChain;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.ResponseStatusException;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests on a real server with Spring Security that rules marked {@code before-security} are decided before its
 * filter chain, and that limits counting only some statuses give back the others.
 */
@ExtendWith({ QuietOutput.class, OutputCaptureExtension.class })
class BeforeSecurityServerIT {

	private final HttpClient http = HttpClient.newHttpClient();

	@Test
	void ordersTheFilterBeforeSpringSecuritysChain() {
		try (ConfigurableApplicationContext context = run()) {
			AbstractFilterRegistrationBean<?> security = context.getBean("securityFilterChainRegistration",
					AbstractFilterRegistrationBean.class);
			AbstractFilterRegistrationBean<?> limits = context
				.getBean(RateLimitWebMvcAutoConfiguration.FILTER_BEAN_NAME, AbstractFilterRegistrationBean.class);
			assertThat(limits.getOrder()).isLessThan(security.getOrder());
		}
	}

	@Test
	void limitsTheLoginPageThatSpringSecurityAnswers(CapturedOutput output) throws Exception {
		try (ConfigurableApplicationContext context = run("--ratelimit.rules[0].path=/login",
				"--ratelimit.rules[0].before-security=true", "--ratelimit.rules[0].limit=2",
				"--ratelimit.rules[0].window=1m", "--ratelimit.rules[0].name=login")) {
			int port = port(context);
			assertThat(get(port, "/login").statusCode()).isEqualTo(200);
			assertThat(get(port, "/login").statusCode()).isEqualTo(200);
			HttpResponse<String> refused = get(port, "/login");
			assertThat(refused.statusCode()).isEqualTo(429);
			assertThat(refused.headers().firstValue("RateLimit-Policy")).hasValue("\"login\";q=2;w=60");
			assertThat(output).doesNotContain("never applies");
		}
	}

	@Test
	void refusesEvenTheRightPasswordOnceTheWrongOnesSpentTheQuota() throws Exception {
		try (ConfigurableApplicationContext context = run("--ratelimit.rules[0].path=/**",
				"--ratelimit.rules[0].before-security=true", "--ratelimit.rules[0].count-status=401",
				"--ratelimit.rules[0].limit=2", "--ratelimit.rules[0].window=1m",
				"--ratelimit.rules[0].algorithm=fixed-window")) {
			int port = port(context);
			for (int i = 0; i < 5; i++) {
				HttpResponse<String> right = get(port, "/me", "alice", "secret");
				assertThat(right.statusCode()).isEqualTo(200);
				assertThat(right.headers().firstValue("RateLimit")).isEmpty();
			}
			assertThat(get(port, "/me", "alice", "wrong").statusCode()).isEqualTo(401);
			assertThat(get(port, "/me", "alice", "wrong").statusCode()).isEqualTo(401);
			HttpResponse<String> refused = get(port, "/me", "alice", "secret");
			assertThat(refused.statusCode()).isEqualTo(429);
			assertThat(refused.headers().firstValue("Retry-After")).hasValue("60");
			context.getBean(ManualTimeSource.class).advance(Duration.ofMinutes(1));
			assertThat(get(port, "/me", "alice", "secret").statusCode()).isEqualTo(200);
		}
	}

	@Test
	void givesBackWhatAHandlersUncountedResponsesTook() throws Exception {
		try (ConfigurableApplicationContext context = run()) {
			int port = port(context);
			for (int i = 0; i < 5; i++) {
				assertThat(get(port, "/attempt?ok=true").statusCode()).isEqualTo(200);
			}
			assertThat(get(port, "/attempt?ok=false").statusCode()).isEqualTo(403);
			assertThat(get(port, "/attempt?ok=false").statusCode()).isEqualTo(403);
			assertThat(get(port, "/attempt?ok=true").statusCode()).isEqualTo(429);
		}
	}

	@Test
	void neverRefusesTheRightPasswordForTheRequestsItHasInFlight() throws Exception {
		try (ConfigurableApplicationContext context = run("--ratelimit.rules[0].path=/**",
				"--ratelimit.rules[0].before-security=true", "--ratelimit.rules[0].count-status=401",
				"--ratelimit.rules[0].limit=2", "--ratelimit.rules[0].window=1m")) {
			List<CompletableFuture<HttpResponse<String>>> answers = inFlight(port(context), 30,
					"/held?ok=true", "alice", "secret");
			AttemptController.release();
			for (CompletableFuture<HttpResponse<String>> answer : answers) {
				assertThat(answer.get(30, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
			}
		}
	}

	@Test
	void countsAtMostTheLimitPlusTheFailuresInFlightLessOne() throws Exception {
		try (ConfigurableApplicationContext context = run()) {
			int port = port(context);
			// ten failures run at once: the client is over its 2 only once they end
			List<CompletableFuture<HttpResponse<String>>> answers = inFlight(port, 10, "/held?ok=false");
			AttemptController.release();
			for (CompletableFuture<HttpResponse<String>> answer : answers) {
				assertThat(answer.get(30, TimeUnit.SECONDS).statusCode()).isEqualTo(403);
			}
			HttpResponse<String> refused = get(port, "/held?ok=true");
			assertThat(refused.statusCode()).isEqualTo(429);
			// GCRA, 2 a minute: the first of the two permits is back in 30 s
			assertThat(refused.headers().firstValue("Retry-After")).hasValue("30");
		}
	}

	@Test
	void limitsTheRequestsInFlightThatTheConfigurationSays() throws Exception {
		try (ConfigurableApplicationContext context = run(
				"--ratelimit.policies.AttemptController.held.concurrency=1")) {
			int port = port(context);
			List<CompletableFuture<HttpResponse<String>>> running = inFlight(port, 1, "/held?ok=true");
			HttpResponse<String> refused = get(port, "/held?ok=true");
			assertThat(refused.statusCode()).isEqualTo(429);
			assertThat(refused.headers().firstValue("RateLimit-Policy"))
				.hasValue("\"AttemptController.held\";q=1;qu=\"concurrent-requests\"");
			assertThat(refused.headers().firstValue("Retry-After")).hasValue("1");
			AttemptController.release();
			assertThat(running.get(0).get(30, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
			assertThat(afterItsPermitsComeBack(port, "/held?ok=true")).as("its permit given back").isEqualTo(200);
		}
	}

	@Test
	void givesBackThePermitInFlightOfARequestThatTimedOut() throws Exception {
		try (ConfigurableApplicationContext context = run("--spring.mvc.async.request-timeout=200ms")) {
			int port = port(context);
			// the container ends the request when its asynchronous result is late, and so gives its permit back
			assertThat(get(port, "/never").statusCode()).isEqualTo(503);
			assertThat(get(port, "/never").statusCode()).as("the permit given back").isEqualTo(503);
		}
	}

	/** Sends {@code count} requests at once and returns once every one of them runs in the held handler. */
	private List<CompletableFuture<HttpResponse<String>>> inFlight(int port, int count, String path,
			String... credentials) throws InterruptedException {
		AttemptController.hold();
		List<CompletableFuture<HttpResponse<String>>> answers = new ArrayList<>();
		for (int i = 0; i < count; i++) {
			answers.add(this.http.sendAsync(request(port, path, credentials), HttpResponse.BodyHandlers.ofString()));
		}
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
		while (AttemptController.running.get() < count) {
			assertThat(answers).as("none answered while the others run").noneMatch(CompletableFuture::isDone);
			assertThat(System.nanoTime()).as("every request in the handler in time").isLessThan(deadline);
			Thread.onSpinWait();
		}
		return answers;
	}

	/**
	 * Returns the status of a request sent once the permits of requests that were answered come back, five seconds
	 * at most: the container may send a response before the filter that holds its permit returns.
	 */
	private int afterItsPermitsComeBack(int port, String path) throws Exception {
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
		int status = get(port, path).statusCode();
		while (status == HttpStatus.TOO_MANY_REQUESTS.value() && System.nanoTime() < deadline) {
			LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10));
			status = get(port, path).statusCode();
		}
		return status;
	}

	private static ConfigurableApplicationContext run(String... args) {
		String[] all = new String[args.length + 1];
		all[0] = "--server.port=0";
		System.arraycopy(args, 0, all, 1, args.length);
		return SpringApplication.run(App.class, all);
	}

	private static int port(ConfigurableApplicationContext context) {
		return ((WebServerApplicationContext) context).getWebServer().getPort();
	}

	private HttpResponse<String> get(int port, String path, String... credentials) throws Exception {
		return this.http.send(request(port, path, credentials), HttpResponse.BodyHandlers.ofString());
	}

	private static HttpRequest request(int port, String path, String... credentials) {
		HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path));
		if (credentials.length == 2) {
			request.header("Authorization", "Basic " + Base64.getEncoder()
				.encodeToString((credentials[0] + ":" + credentials[1]).getBytes(StandardCharsets.UTF_8)));
		}
		return request.build();
	}

	@SpringBootConfiguration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	@Import(AttemptController.class)
	static class App {

		@Bean
		ManualTimeSource timeSource() {
			return new ManualTimeSource();
		}

		@Bean
		SecurityFilterChain securityFilterChain(HttpSecurity http) throws Exception {
			return http.authorizeHttpRequests((requests) -> requests.anyRequest().permitAll())
				.httpBasic(Customizer.withDefaults())
				.formLogin(Customizer.withDefaults())
				.csrf((csrf) -> csrf.disable())
				.build();
		}

		@Bean
		InMemoryUserDetailsManager users() {
			return new InMemoryUserDetailsManager(User.withUsername("alice").password("{noop}secret").build());
		}

	}

	@RestController
	static class AttemptController {

		static final AtomicInteger running = new AtomicInteger();

		private static volatile CountDownLatch release = new CountDownLatch(0);

		/** Holds the requests that reach {@code /held} from now on, until {@link #release}. */
		static void hold() {
			running.set(0);
			release = new CountDownLatch(1);
		}

		static void release() {
			release.countDown();
		}

		@GetMapping("/me")
		String me() {
			return "me";
		}

		@GetMapping("/attempt")
		@RateLimited(limit = 2, window = "1m", countStatus = 403)
		String attempt(@RequestParam boolean ok) {
			if (!ok) {
				throw new ResponseStatusException(HttpStatus.FORBIDDEN);
			}
			return "ok";
		}

		@GetMapping("/never")
		@RateLimited(limit = 100, window = "1m", concurrency = 1)
		CompletableFuture<String> never() {
			return new CompletableFuture<>();
		}

		@GetMapping("/held")
		@RateLimited(limit = 2, window = "1m", countStatus = 403)
		String held(@RequestParam boolean ok) throws InterruptedException {
			running.incrementAndGet();
			assertThat(release.await(30, TimeUnit.SECONDS)).as("released in time").isTrue();
			return attempt(ok);
		}

	}

}
