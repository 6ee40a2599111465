package dev.ratelimit.spring.autoconfigure;


import dev.ratelimit.core.ManualTimeSource;
import dev.ratelimit.spring.KeyResolver;
import dev.ratelimit.spring.actuate.RateLimitEndpoint;
import dev.ratelimit.spring.actuate.RateLimitEndpointWebExtension;
import dev.ratelimit.spring.webmvc.RateLimitWebMvcAutoConfiguration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.actuate.autoconfigure.endpoint.EndpointAutoConfiguration;
import org.springframework.boot.actuate.autoconfigure.endpoint.web.WebEndpointAutoConfiguration;
import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.http.converter.autoconfigure.HttpMessageConvertersAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.webmvc.autoconfigure.WebMvcAutoConfiguration;
import org.springframework.test.web.servlet.assertj.MockMvcTester;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The {@code ratelimit} endpoint on the test controllers: available only where Actuator would expose it, and
 * changes that apply to the next request of every endpoint they touch, stacks included, or to none.
 */
@ExtendWith(OutputCaptureExtension.class)
class RateLimitEndpointTests {

	private final WebApplicationContextRunner runner = new WebApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class,
				RateLimitWebMvcAutoConfiguration.class, RateLimitEndpointAutoConfiguration.class,
				EndpointAutoConfiguration.class, WebEndpointAutoConfiguration.class, WebMvcAutoConfiguration.class,
				HttpMessageConvertersAutoConfiguration.class, JacksonAutoConfiguration.class))
		.withBean(ManualTimeSource.class, ManualTimeSource::new)
		.withBean("apiKeyResolver", KeyResolver.class, () -> (request) -> request.getHeader("X-Key"))
		.withUserConfiguration(TestControllers.LimitedController.class);

	@Test
	void isAvailableOnlyWhenExposed() {
		this.runner.run((context) -> assertThat(context).hasNotFailed()
			.doesNotHaveBean(RateLimitEndpoint.class)
			.doesNotHaveBean(RateLimitEndpointWebExtension.class));
		this.runner.withPropertyValues("management.endpoints.web.exposure.include=ratelimit")
			.run((context) -> assertThat(context).hasSingleBean(RateLimitEndpoint.class)
				.hasSingleBean(RateLimitEndpointWebExtension.class));
	}

	@Test
	void warnsWhenItsWritesAreExposedOverHttpWithoutSpringSecurity(CapturedOutput output) {
		String warning = "The ratelimit endpoint is exposed over HTTP with its write operations";
		WebApplicationContextRunner unsecured = this.runner
			.withClassLoader(new FilteredClassLoader("org.springframework.security.web"));
		unsecured.withPropertyValues("management.endpoints.web.exposure.include=ratelimit")
			.run((context) -> assertThat(output).contains(warning + ", which change a policy and reset a client"));
		int warned = output.toString().split(warning, -1).length - 1;
		unsecured
			.withPropertyValues("management.endpoints.web.exposure.include=ratelimit",
					"management.endpoint.ratelimit.access=READ_ONLY")
			.run((context) -> assertThat(context).hasSingleBean(RateLimitEndpoint.class));
		unsecured.run((context) -> assertThat(context).hasNotFailed());
		this.runner.withPropertyValues("management.endpoints.web.exposure.include=ratelimit")
			.run((context) -> assertThat(context).hasSingleBean(RateLimitEndpoint.class));
		assertThat(output.toString().split(warning, -1).length - 1)
			.as("no warning when read-only, not exposed, or secured").isEqualTo(warned);
	}

	@Test
	void changesOnePolicyOfAStackAndLeavesTheOtherAsItIs() {
		run((endpoint, mvc) -> {
			assertThat(endpoint.change("per-second", 1L, null, null).limit()).isEqualTo(1);
			assertThat(mvc.get().uri("/stacked")).hasStatusOk()
				.headers()
				.hasValue("RateLimit-Policy", "\"per-second\";q=1;w=1, \"per-minute\";q=3;w=60");
			assertThat(mvc.get().uri("/stacked")).hasStatus(429);
			assertThat(endpoint.rateLimits().policies().get("per-minute").change()).isNull();
			assertThat(endpoint.removeChange("per-second").limit()).isEqualTo(2);
			assertThat(endpoint.policy("per-second").change()).isNull();
		});
	}

	@Test
	void refusesAValueThePolicyCannotTakeAndChangesNothing() {
		run((endpoint, mvc) -> {
			assertThatExceptionOfType(InvalidEndpointRequestException.class)
				.isThrownBy(() -> endpoint.change("fixed", null, null, 5L))
				.withMessageContaining("burst of policy 'fixed' is 5, but FIXED_WINDOW has no burst");
			assertThatExceptionOfType(InvalidEndpointRequestException.class)
				.isThrownBy(() -> endpoint.change("fixed", -1L, "1m", null))
				.withMessageContaining("limit of policy 'fixed' must be at least 1");
			assertThatExceptionOfType(RateLimitEndpoint.NoSuchPolicy.class)
				.isThrownBy(() -> endpoint.change("nothing", 1L, null, null))
				.withMessageContaining("the policies are");
			assertThat(endpoint.policy("fixed").limit()).isEqualTo(2);
			assertThat(endpoint.policy("fixed").window()).isEqualTo("PT10S");
			assertThat(mvc.get().uri("/fixed")).hasStatusOk()
				.headers()
				.hasValue("RateLimit-Policy", "\"fixed\";q=2;w=10");
		});
	}

	@Test
	void inspectsAndResetsAKey() {
		run((endpoint, mvc) -> {
			assertThat(mvc.get().uri("/fixed")).hasStatusOk();
			assertThat(mvc.get().uri("/fixed")).hasStatusOk();
			assertThat(endpoint.key("fixed", new String[] { "ip:127.0.0.1" })).satisfies((key) -> {
				assertThat(key.allowed()).isFalse();
				assertThat(key.remaining()).isZero();
				assertThat(key.retryAfter()).isEqualTo(10);
			});
			assertThat(endpoint.key("nothing", new String[] { "ip:127.0.0.1" })).isNull();
			assertThat(endpoint.reset("fixed", new String[] { "ip:127.0.0.1" }).remaining()).isEqualTo(2);
			assertThat(mvc.get().uri("/fixed")).hasStatusOk();
		});
	}

	private void run(EndpointTest test) {
		this.runner.withPropertyValues("management.endpoints.web.exposure.include=ratelimit")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				test.run(context.getBean(RateLimitEndpoint.class), MockMvcTester.from(context));
			});
	}

	@FunctionalInterface
	private interface EndpointTest {

		void run(RateLimitEndpoint endpoint, MockMvcTester mvc);

	}

}
