package dev.ratelimit.spring.autoconfigure;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;

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
		HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path));
		if (credentials.length == 2) {
			request.header("Authorization", "Basic " + Base64.getEncoder()
				.encodeToString((credentials[0] + ":" + credentials[1]).getBytes(StandardCharsets.UTF_8)));
		}
		return this.http.send(request.build(), HttpResponse.BodyHandlers.ofString());
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

	}

}
