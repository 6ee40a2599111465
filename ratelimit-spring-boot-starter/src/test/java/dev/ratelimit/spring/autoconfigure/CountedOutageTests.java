package dev.ratelimit.spring.autoconfigure;

import java.util.concurrent.CompletableFuture;

import dev.ratelimit.core.FailurePolicy;
import dev.ratelimit.core.ManualTimeSource;
import dev.ratelimit.core.RateLimitStore;
import dev.ratelimit.core.memory.InMemoryRateLimitStore;
import dev.ratelimit.core.redis.RedisRateLimitStore;
import dev.ratelimit.spring.RateLimited;
import dev.ratelimit.spring.webmvc.RateLimitWebMvcAutoConfiguration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.http.converter.autoconfigure.HttpMessageConvertersAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.webmvc.autoconfigure.WebMvcAutoConfiguration;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.test.web.servlet.assertj.MockMvcTester;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A limit that counts only failures while Redis does not answer at all: the failure policy tells whether the
 * client is over and counts what fails, so the right password always passes and wrong ones are still limited.
 */
@ExtendWith(QuietOutput.class)
class CountedOutageTests {

	private final ManualTimeSource time = new ManualTimeSource();

	private final WebApplicationContextRunner runner = new WebApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class,
				RateLimitWebMvcAutoConfiguration.class, WebMvcAutoConfiguration.class,
				HttpMessageConvertersAutoConfiguration.class, JacksonAutoConfiguration.class))
		.withBean(ManualTimeSource.class, () -> this.time)
		.withBean(RateLimitStore.class, this::downRedis)
		.withUserConfiguration(LoginController.class);

	@Test
	void passesTheRightPasswordAndLimitsWrongOnesUnderLocal() {
		this.runner.run((context) -> {
			MockMvcTester mvc = MockMvcTester.from(context);
			for (int i = 0; i < 20; i++) {
				assertThat(mvc.get().uri("/login?fail=false")).hasStatusOk();
			}
			// a client Redis never told of: one failure a window, the most every instance may add
			assertThat(mvc.get().uri("/login?fail=true")).hasStatus(HttpStatus.FORBIDDEN);
			assertThat(mvc.get().uri("/login?fail=true")).hasStatus(HttpStatus.TOO_MANY_REQUESTS);
			assertThat(mvc.get().uri("/login?fail=false")).as("even the right password, once over")
				.hasStatus(HttpStatus.TOO_MANY_REQUESTS);
		});
	}

	private RedisRateLimitStore downRedis() {
		return RedisRateLimitStore
			.builder((sha1, script, keys, args) -> CompletableFuture.failedFuture(new IllegalStateException("down")))
			.failurePolicy(FailurePolicy.LOCAL)
			.fallback(InMemoryRateLimitStore.builder().timeSource(this.time).build())
			.timeSource(this.time)
			.build();
	}

	@RestController
	static class LoginController {

		@GetMapping("/login")
		@RateLimited(limit = 5, window = "1m", countStatus = 403, name = "login")
		ResponseEntity<String> login(@RequestParam boolean fail) {
			return fail ? ResponseEntity.status(HttpStatus.FORBIDDEN).body("denied") : ResponseEntity.ok("welcome");
		}

	}

}
