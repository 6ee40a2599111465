package dev.ratelimit.spring.autoconfigure;

import java.time.Duration;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import dev.ratelimit.core.ManualTimeSource;
import dev.ratelimit.spring.RateLimitConfigurationException;
import dev.ratelimit.spring.RateLimited;
import dev.ratelimit.spring.web.internal.LimitCatalog;
import dev.ratelimit.spring.webmvc.RateLimitWebMvcAutoConfiguration;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.slf4j.LoggerFactory;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.webmvc.autoconfigure.WebMvcAutoConfiguration;
import org.springframework.core.NestedExceptionUtils;
import org.springframework.http.HttpStatus;
import org.springframework.test.web.servlet.assertj.MockMvcTester;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests {@code @RateLimited(penalty = ...)} and {@code ratelimit.policies.<name>.penalty}: a client that went
 * over is refused for the penalty, told the rest of it, and let through again after it or after a reset.
 */
@ExtendWith({ QuietOutput.class, OutputCaptureExtension.class })
class PenaltyTests {

	private final ManualTimeSource time = new ManualTimeSource();

	private final WebApplicationContextRunner runner = new WebApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class,
				RateLimitWebMvcAutoConfiguration.class, WebMvcAutoConfiguration.class))
		.withBean(ManualTimeSource.class, () -> this.time)
		.withBean(MeterRegistry.class, SimpleMeterRegistry::new)
		.withUserConfiguration(PenaltyController.class);

	@Test
	void refusesAClientThatWentOverForThePenalty() {
		this.runner.run((context) -> {
			MockMvcTester mvc = MockMvcTester.from(context);
			assertThat(mvc.get().uri("/penalty")).hasStatusOk();
			assertThat(mvc.get().uri("/penalty")).hasStatus(HttpStatus.TOO_MANY_REQUESTS)
				.headers()
				.hasValue("Retry-After", "60");
			this.time.advance(Duration.ofSeconds(15));
			assertThat(mvc.get().uri("/penalty")).as("the quota back, the penalty not over")
				.hasStatus(HttpStatus.TOO_MANY_REQUESTS)
				.headers()
				.hasValue("Retry-After", "45")
				.hasValue("RateLimit", "\"penalty\";r=0;t=45");
			this.time.advance(Duration.ofSeconds(45));
			assertThat(mvc.get().uri("/penalty")).hasStatusOk();
		});
	}

	@Test
	void reportsThePenaltyAtStartup(CapturedOutput output) {
		Logger logger = (Logger) LoggerFactory.getLogger(LimitCatalog.class);
		logger.setLevel(Level.INFO);
		try {
			this.runner.run((context) -> assertThat(output)
				.contains("Rate limit 'penalty': GCRA 1/PT10S penalty PT1M by ip on GET,HEAD /penalty"));
		}
		finally {
			logger.setLevel(null);
		}
	}

	@Test
	void takesThePenaltyFromTheConfigurationOverTheAnnotation() {
		this.runner.withPropertyValues("ratelimit.policies.penalty.penalty=5s").run((context) -> {
			MockMvcTester mvc = MockMvcTester.from(context);
			assertThat(mvc.get().uri("/penalty")).hasStatusOk();
			assertThat(mvc.get().uri("/penalty")).hasStatus(HttpStatus.TOO_MANY_REQUESTS)
				.headers()
				.hasValue("Retry-After", "5");
		});
	}

	@Test
	void reportsAPenaltyInShadowModeWithoutApplyingIt() {
		this.runner.withPropertyValues("ratelimit.policies.penalty.shadow=true").run((context) -> {
			MockMvcTester mvc = MockMvcTester.from(context);
			for (int i = 0; i < 3; i++) {
				assertThat(mvc.get().uri("/penalty")).hasStatusOk();
			}
			this.time.advance(Duration.ofSeconds(15));
			assertThat(mvc.get().uri("/penalty")).hasStatusOk();
			assertThat(context.getBean(MeterRegistry.class)
				.get("ratelimit.decisions")
				.tags("policy", "penalty", "outcome", "shadow_rejected")
				.counter()
				.count()).as("the two over the limit, and one under the penalty").isEqualTo(3);
		});
	}

	@Test
	void stopsTheStartOnAPenaltyThatIsNoDuration() {
		this.runner.withPropertyValues("ratelimit.policies.penalty.penalty=a minute").run((context) -> {
			assertThat(context).hasFailed();
			Throwable cause = NestedExceptionUtils.getMostSpecificCause(context.getStartupFailure());
			assertThat(cause).isInstanceOf(RateLimitConfigurationException.class)
				.hasMessageContaining("penalty 'a minute' is not a duration");
		});
	}

	@RestController
	static class PenaltyController {

		@GetMapping("/penalty")
		@RateLimited(limit = 1, window = "10s", penalty = "1m", name = "penalty")
		String penalty() {
			return "penalty";
		}

	}

}
