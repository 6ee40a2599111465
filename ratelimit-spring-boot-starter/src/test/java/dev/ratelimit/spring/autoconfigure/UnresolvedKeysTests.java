package dev.ratelimit.spring.autoconfigure;

import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import dev.ratelimit.core.ManualTimeSource;
import dev.ratelimit.spring.RateLimited;
import dev.ratelimit.spring.webmvc.RateLimitWebMvcAutoConfiguration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.webmvc.autoconfigure.WebMvcAutoConfiguration;
import org.springframework.http.HttpStatus;
import org.springframework.test.web.servlet.assertj.MockMvcTester;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests that a key that cannot be computed for one request limits it by its client address, with at most one
 * WARN line per endpoint per minute and no stack trace.
 */
@ExtendWith({ QuietOutput.class, OutputCaptureExtension.class })
class UnresolvedKeysTests {

	private static final Pattern WARNING = Pattern.compile("Could not compute the key");

	private final ManualTimeSource time = new ManualTimeSource();

	private final WebApplicationContextRunner runner = new WebApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class,
				RateLimitWebMvcAutoConfiguration.class, WebMvcAutoConfiguration.class))
		.withBean(ManualTimeSource.class, () -> this.time)
		.withUserConfiguration(TenantController.class);

	@Test
	void limitsByClientAddressWhenTheExpressionFails(CapturedOutput output) {
		this.runner.run((context) -> {
			MockMvcTester mvc = MockMvcTester.from(context);
			// "ab".substring(3) throws: every request falls back to the one client address, 2 per minute
			assertThat(mvc.get().uri("/tenant?tenant=ab")).hasStatusOk()
				.headers()
				.hasValue("RateLimit", "\"tenant\";r=1;t=30");
			assertThat(mvc.get().uri("/tenant?tenant=cd")).hasStatusOk();
			assertThat(mvc.get().uri("/tenant?tenant=ef")).hasStatus(HttpStatus.TOO_MANY_REQUESTS);
			assertThat(count(output)).isEqualTo(1);
			assertThat(output).contains("Could not compute the key 'spel:#tenant.substring(3)' of [tenant] for GET "
					+ "/tenant (java.lang.StringIndexOutOfBoundsException: begin 3, end 2, length 2)")
				.contains("limited by its client address instead. At most one such line per minute.")
				.doesNotContain("\tat ");
			this.time.advance(Duration.ofSeconds(59));
			mvc.get().uri("/tenant?tenant=gh").exchange();
			assertThat(count(output)).isEqualTo(1);
			this.time.advance(Duration.ofSeconds(1));
			assertThat(mvc.get().uri("/tenant?tenant=ij")).hasStatusOk();
			assertThat(count(output)).isEqualTo(2);
			assertThat(output).contains("limited by its client address instead; 3 more in the last minute.");
		});
	}

	@Test
	void usesTheKeyWhenItCanBeComputed(CapturedOutput output) {
		this.runner.run((context) -> {
			MockMvcTester mvc = MockMvcTester.from(context);
			assertThat(mvc.get().uri("/tenant?tenant=alpha")).hasStatusOk();
			assertThat(mvc.get().uri("/tenant?tenant=alpha")).hasStatusOk();
			assertThat(mvc.get().uri("/tenant?tenant=alpha")).hasStatus(HttpStatus.TOO_MANY_REQUESTS);
			assertThat(mvc.get().uri("/tenant?tenant=bravo")).hasStatusOk();
			assertThat(count(output)).isZero();
		});
	}

	private static int count(CapturedOutput output) {
		Matcher matcher = WARNING.matcher(output.getAll());
		int count = 0;
		while (matcher.find()) {
			count++;
		}
		return count;
	}

	@RestController
	static class TenantController {

		@GetMapping("/tenant")
		@RateLimited(limit = 2, window = "1m", name = "tenant", key = "spel:#tenant.substring(3)")
		String tenant(@RequestParam String tenant) {
			return tenant;
		}

	}

}
