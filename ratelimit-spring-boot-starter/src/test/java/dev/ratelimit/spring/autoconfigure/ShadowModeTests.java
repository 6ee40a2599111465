package dev.ratelimit.spring.autoconfigure;

import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.ManualTimeSource;
import dev.ratelimit.spring.KeyResolver;
import dev.ratelimit.spring.RateLimited;
import dev.ratelimit.spring.web.internal.LimitCatalog;
import dev.ratelimit.spring.web.internal.RequestDecisions;
import dev.ratelimit.spring.webmvc.RateLimitWebMvcAutoConfiguration;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.slf4j.LoggerFactory;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.http.converter.autoconfigure.HttpMessageConvertersAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.assertj.AssertableWebApplicationContext;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.webmvc.autoconfigure.WebMvcAutoConfiguration;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.test.web.servlet.assertj.MockMvcTester;
import org.springframework.test.web.servlet.assertj.MvcTestResult;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests of shadow mode on the decision path: policies in shadow mode are decided and counted as if enforced,
 * after the enforced ones, and never reject, hold or change a response.
 */
@ExtendWith({ QuietOutput.class, OutputCaptureExtension.class })
class ShadowModeTests {

	private static final Pattern SHADOW_LINE = Pattern.compile("Rate limit '\\S+' is in shadow mode");

	private final ManualTimeSource time = new ManualTimeSource();

	private final Logger interceptorLogger = (Logger) LoggerFactory.getLogger(RequestDecisions.class);

	private final Logger catalogLogger = (Logger) LoggerFactory.getLogger(LimitCatalog.class);

	private final WebApplicationContextRunner runner = new WebApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class,
				RateLimitWebMvcAutoConfiguration.class, WebMvcAutoConfiguration.class,
				HttpMessageConvertersAutoConfiguration.class, JacksonAutoConfiguration.class))
		.withBean(ManualTimeSource.class, () -> this.time)
		.withBean(MeterRegistry.class, SimpleMeterRegistry::new)
		.withBean("apiKeyResolver", KeyResolver.class, () -> (request) -> request.getHeader("X-Key"))
		.withUserConfiguration(ShadowController.class, TestControllers.LimitedController.class);

	@BeforeEach
	void logInfo() {
		this.interceptorLogger.setLevel(Level.INFO);
		this.catalogLogger.setLevel(Level.INFO);
	}

	@AfterEach
	void restoreLevels() {
		this.interceptorLogger.setLevel(null);
		this.catalogLogger.setLevel(null);
	}

	@Test
	void decidesTheShadowPoliciesOnlyWhenTheEnforcedOnesLetTheRequestThrough() {
		this.runner.withPropertyValues("ratelimit.policies.three.shadow=true", "ratelimit.shadow-headers=true")
			.run((context) -> {
				MockMvcTester mvc = MockMvcTester.from(context);
				assertThat(mvc.get().uri("/shadow/stacked")).hasStatusOk()
					.headers()
					.hasValue("RateLimit-Policy", "\"two\";q=2;w=10, \"three\";q=3;w=10")
					.hasValue("RateLimit", "\"two\";r=1;t=5, \"three\";r=2;t=4");
				assertThat(mvc.get().uri("/shadow/stacked")).hasStatusOk();
				MvcTestResult rejected = mvc.get().uri("/shadow/stacked").exchange();
				assertThat(rejected).hasStatus(HttpStatus.TOO_MANY_REQUESTS)
					.headers()
					.hasValue("Retry-After", "5")
					.hasValue("RateLimit-Policy", "\"two\";q=2;w=10")
					.hasValue("RateLimit", "\"two\";r=0;t=10");
				assertThat(rejected).bodyJson().extractingPath("$.policies").asArray().containsExactly("two");
				this.time.advance(Duration.ofSeconds(5));
				// the rejected request took nothing from three: one of its permits is back, one is left
				assertThat(mvc.get().uri("/shadow/stacked")).hasStatusOk()
					.headers()
					.hasValue("RateLimit", "\"two\";r=0;t=10, \"three\";r=1;t=5");
				assertThat(count(context, "two", "allowed")).isEqualTo(3);
				assertThat(count(context, "two", "rejected")).isEqualTo(1);
				assertThat(count(context, "three", "allowed")).isEqualTo(3);
				assertThat(count(context, "three", "rejected")).isZero();
				assertThat(count(context, "three", "shadow_rejected")).isZero();
			});
	}

	@Test
	void letsThroughWhatAShadowPolicyWouldRejectWithTheResponseUnchanged() {
		this.runner.withPropertyValues("ratelimit.shadow=true", "ratelimit.policies.three.shadow=false")
			.run((context) -> {
				MockMvcTester mvc = MockMvcTester.from(context);
				for (int i = 0; i < 2; i++) {
					assertThat(mvc.get().uri("/shadow/stacked")).hasStatusOk()
						.headers()
						.hasValue("RateLimit-Policy", "\"three\";q=3;w=10");
				}
				// two, in shadow mode, would reject the third: it passes, with three's headers alone
				MvcTestResult passed = mvc.get().uri("/shadow/stacked").exchange();
				assertThat(passed).hasStatusOk()
					.hasBodyTextEqualTo("stacked")
					.headers()
					.doesNotContainHeader("Retry-After")
					.hasValue("RateLimit-Policy", "\"three\";q=3;w=10")
					.hasValue("RateLimit", "\"three\";r=0;t=10");
				assertThat(count(context, "two", "shadow_rejected")).isEqualTo(1);
				// three is enforced and rejects the fourth; two is not decided
				assertThat(mvc.get().uri("/shadow/stacked")).hasStatus(HttpStatus.TOO_MANY_REQUESTS);
				assertThat(count(context, "three", "rejected")).isEqualTo(1);
				assertThat(count(context, "two", "allowed")).isEqualTo(2);
				assertThat(count(context, "two", "shadow_rejected")).isEqualTo(1);
				// every other policy is in shadow mode and writes no headers by default
				for (int i = 0; i < 3; i++) {
					assertThat(mvc.get().uri("/fixed")).hasStatusOk().headers().doesNotContainHeader("RateLimit");
				}
				assertThat(count(context, "fixed", "shadow_rejected")).isEqualTo(1);
			});
	}

	@Test
	void holdsNothingThatAShadowLeakyBucketWouldDelayAndKeepsItsSlotsTaken(CapturedOutput output) {
		this.runner.withPropertyValues("ratelimit.shadow=true").run((context) -> {
			MockMvcTester mvc = MockMvcTester.from(context);
			for (int i = 0; i < 11; i++) {
				MvcTestResult result = mvc.get().uri("/shadow/shaped").exchange();
				assertThat(result.getMvcResult().getRequest().isAsyncStarted()).isFalse();
				assertThat(result).hasStatusOk().hasBodyTextEqualTo("shaped");
			}
			// enforced: 1 at once, 5 queued, the others rejected
			assertThat(count(context, "shaped", "allowed")).isEqualTo(1);
			assertThat(count(context, "shaped", "shadow_delayed")).isEqualTo(5);
			assertThat(count(context, "shaped", "shadow_rejected")).isEqualTo(5);
			assertThat(count(context, "shaped", "delayed")).isZero();
			assertThat(output).contains("Rate limit 'shaped' is in shadow mode: it let through 0 requests it would have "
					+ "rejected and 1 it would have delayed since the start.");
			assertThat(lines(output)).isOne();
			this.time.advance(Duration.ofMillis(500));
			// the first queued request's slot has come: one place is free in the queue, and only one
			assertThat(mvc.get().uri("/shadow/shaped")).hasStatusOk();
			assertThat(mvc.get().uri("/shadow/shaped")).hasStatusOk();
			assertThat(count(context, "shaped", "shadow_delayed")).isEqualTo(6);
			assertThat(count(context, "shaped", "shadow_rejected")).isEqualTo(6);
		});
	}

	@Test
	void givesBackTheShadowPermitsOfResponsesThatDoNotCount() {
		this.runner.withPropertyValues("ratelimit.shadow=true").run((context) -> {
			MockMvcTester mvc = MockMvcTester.from(context);
			for (int i = 0; i < 5; i++) {
				assertThat(mvc.get().uri("/shadow/login?fail=false")).hasStatusOk();
			}
			assertThat(mvc.get().uri("/shadow/login?fail=true")).hasStatus(HttpStatus.FORBIDDEN);
			assertThat(mvc.get().uri("/shadow/login?fail=true")).hasStatus(HttpStatus.FORBIDDEN);
			assertThat(count(context, "login", "shadow_rejected")).isZero();
			// two failures spent the quota: the shadow limit would refuse the next attempt, which still runs
			assertThat(mvc.get().uri("/shadow/login?fail=true")).hasStatus(HttpStatus.FORBIDDEN);
			assertThat(mvc.get().uri("/shadow/login?fail=false")).hasStatusOk().headers().doesNotContainHeader("RateLimit");
			assertThat(count(context, "login", "shadow_rejected")).isEqualTo(2);
			assertThat(count(context, "login", "allowed")).isEqualTo(7);
		});
	}

	@Test
	void logsWhatAShadowPolicyWouldHaveRejectedAtMostOnceAMinute(CapturedOutput output) {
		this.runner.withPropertyValues("ratelimit.shadow=true").run((context) -> {
			MockMvcTester mvc = MockMvcTester.from(context);
			for (int i = 0; i < 5; i++) {
				assertThat(mvc.get().uri("/shadow/single")).hasStatusOk();
			}
			assertThat(lines(output)).isOne();
			assertThat(output).contains("Rate limit 'single' is in shadow mode: it let through 1 request it would have "
					+ "rejected and 0 it would have delayed since the start. At most one such line per minute.");
			this.time.advance(Duration.ofSeconds(59));
			mvc.get().uri("/shadow/single").exchange();
			mvc.get().uri("/shadow/single").exchange();
			assertThat(lines(output)).isOne();
			this.time.advance(Duration.ofSeconds(1));
			mvc.get().uri("/shadow/single").exchange();
			assertThat(lines(output)).isEqualTo(2);
			assertThat(output).contains("Rate limit 'single' is in shadow mode: it let through 5 requests it would have "
					+ "rejected and 0 it would have delayed since its previous line.");
		});
	}

	@Test
	void appliesTheShadowSettingOfARuleAndOfItsPolicyName() {
		this.runner
			.withPropertyValues("ratelimit.rules[0].path=/free", "ratelimit.rules[0].limit=1",
					"ratelimit.rules[0].window=10s", "ratelimit.rules[0].name=free", "ratelimit.rules[1].path=/items/*",
					"ratelimit.rules[1].limit=1", "ratelimit.rules[1].window=10s", "ratelimit.rules[1].shadow=true",
					"ratelimit.rules[1].name=items", "ratelimit.policies.free.shadow=true")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				MockMvcTester mvc = MockMvcTester.from(context);
				for (int i = 0; i < 3; i++) {
					assertThat(mvc.get().uri("/free")).hasStatusOk();
					assertThat(mvc.get().uri("/items/" + i)).hasStatusOk();
				}
				assertThat(count(context, "free", "shadow_rejected")).isEqualTo(2);
				assertThat(count(context, "items", "shadow_rejected")).isEqualTo(2);
			});
	}

	@Test
	void enforcesARuleWhosePolicyNameTurnsItsShadowModeOff() {
		this.runner
			.withPropertyValues("ratelimit.shadow=true", "ratelimit.rules[0].path=/free", "ratelimit.rules[0].limit=1",
					"ratelimit.rules[0].window=10s", "ratelimit.rules[0].shadow=true", "ratelimit.rules[0].name=free",
					"ratelimit.policies.free.shadow=false")
			.run((context) -> {
				MockMvcTester mvc = MockMvcTester.from(context);
				assertThat(mvc.get().uri("/free")).hasStatusOk();
				assertThat(mvc.get().uri("/free")).hasStatus(HttpStatus.TOO_MANY_REQUESTS);
			});
	}

	@Test
	void saysInTheStartupReportWhichPoliciesAreInShadowMode(CapturedOutput output) {
		this.runner
			.withPropertyValues("ratelimit.policies.three.shadow=true", "ratelimit.rules[0].path=/free",
					"ratelimit.rules[0].limit=1", "ratelimit.rules[0].window=10s", "ratelimit.rules[0].name=free",
					"ratelimit.policies.free.shadow=true")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(output).contains("Rate limit 'three': GCRA 3/PT10S in shadow mode by ip on GET,HEAD /shadow/stacked")
					.contains("Rate limit 'free': GCRA 1/PT10S in shadow mode by ip on * /free; from ratelimit.rules[0] "
							+ "with ratelimit.policies.free.shadow (\"ratelimit.policies.free.shadow\" from property "
							+ "source \"test\")")
					.contains("Rate limit 'two': GCRA 2/PT10S by ip on GET,HEAD /shadow/stacked");
			});
	}

	private static double count(AssertableWebApplicationContext context, String policy, String outcome) {
		return context.getBean(MeterRegistry.class)
			.get("ratelimit.decisions")
			.tags("policy", policy, "outcome", outcome)
			.counter()
			.count();
	}

	private static int lines(CapturedOutput output) {
		Matcher matcher = SHADOW_LINE.matcher(output.getAll());
		int count = 0;
		while (matcher.find()) {
			count++;
		}
		return count;
	}

	@RestController
	static class ShadowController {

		@GetMapping("/shadow/stacked")
		@RateLimited(limit = 2, window = "10s", name = "two")
		@RateLimited(limit = 3, window = "10s", name = "three")
		String stacked() {
			return "stacked";
		}

		@GetMapping("/shadow/shaped")
		@RateLimited(limit = 2, window = "1s", burst = 5, algorithm = Algorithm.LEAKY_BUCKET, name = "shaped")
		String shaped() {
			return "shaped";
		}

		@GetMapping("/shadow/login")
		@RateLimited(limit = 2, window = "1m", countStatus = 403, name = "login")
		ResponseEntity<String> login(@RequestParam boolean fail) {
			return fail ? ResponseEntity.status(HttpStatus.FORBIDDEN).body("denied") : ResponseEntity.ok("welcome");
		}

		@GetMapping("/shadow/single")
		@RateLimited(limit = 1, window = "10s", name = "single")
		String single() {
			return "single";
		}

	}

}
