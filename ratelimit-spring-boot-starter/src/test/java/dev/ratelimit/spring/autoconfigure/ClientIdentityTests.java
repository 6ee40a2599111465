package dev.ratelimit.spring.autoconfigure;

import java.util.function.Consumer;

import dev.ratelimit.core.ManualTimeSource;
import dev.ratelimit.spring.KeyResolver;
import dev.ratelimit.spring.RateLimitConfigurationException;
import dev.ratelimit.spring.RateLimitExemption;
import dev.ratelimit.spring.observability.internal.MicrometerRateLimitMetrics;
import dev.ratelimit.spring.webmvc.RateLimitWebMvcAutoConfiguration;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.http.converter.autoconfigure.HttpMessageConvertersAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.webmvc.autoconfigure.WebMvcAutoConfiguration;
import org.springframework.http.HttpStatus;
import org.springframework.test.web.servlet.assertj.MockMvcTester;
import org.springframework.test.web.servlet.request.RequestPostProcessor;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests of who the client of a request is (past trusted proxies, an IPv6 client by its network) and of the
 * requests exempt from limits, through Spring MVC.
 */
@ExtendWith(QuietOutput.class)
class ClientIdentityTests {

	private final WebApplicationContextRunner runner = new WebApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class,
				RateLimitWebMvcAutoConfiguration.class, WebMvcAutoConfiguration.class,
				HttpMessageConvertersAutoConfiguration.class, JacksonAutoConfiguration.class))
		.withBean(ManualTimeSource.class, ManualTimeSource::new)
		.withBean("apiKeyResolver", KeyResolver.class, () -> (request) -> request.getHeader("X-Key"))
		.withBean("internal", RateLimitExemption.class, () -> (request) -> "yes".equals(request.getHeader("X-Internal")))
		.withUserConfiguration(TestControllers.LimitedController.class);

	@Test
	void keysAnIpv6ClientByItsSlash64ByDefault() {
		run((mvc) -> {
			assertThat(mvc.get().uri("/user").with(from("2001:db8:1:2::1"))).hasStatusOk();
			assertThat(mvc.get().uri("/user").with(from("2001:db8:1:2:ffff::9"))).hasStatus(HttpStatus.TOO_MANY_REQUESTS);
			assertThat(mvc.get().uri("/user").with(from("2001:db8:1:3::1"))).hasStatusOk();
		});
	}

	@Test
	void keysAnIpv6ClientByTheConfiguredPrefix() {
		run((mvc) -> {
			assertThat(mvc.get().uri("/user").with(from("2001:db8:1:200::1"))).hasStatusOk();
			assertThat(mvc.get().uri("/user").with(from("2001:db8:1:2ff::1"))).hasStatus(HttpStatus.TOO_MANY_REQUESTS);
			assertThat(mvc.get().uri("/user").with(from("2001:db8:1:300::1"))).hasStatusOk();
		}, "ratelimit.client-address.ipv6-prefix=56");
	}

	@Test
	void keysAnIpv6ClientByThePrefixOfItsPolicy() {
		run((mvc) -> {
			assertThat(mvc.get().uri("/user").with(from("2001:db8:1:2::1"))).hasStatusOk();
			assertThat(mvc.get().uri("/user").with(from("2001:db8:1:2::2"))).hasStatusOk();
			assertThat(mvc.get().uri("/user").with(from("2001:db8:1:2::2"))).hasStatus(HttpStatus.TOO_MANY_REQUESTS);
			// the other policies keep the global /64
			assertThat(mvc.get().uri("/header").with(from("2001:db8:1:2::1"))).hasStatusOk();
			assertThat(mvc.get().uri("/header").with(from("2001:db8:1:2::2"))).hasStatus(HttpStatus.TOO_MANY_REQUESTS);
		}, "ratelimit.policies.LimitedController.user.ipv6-prefix=128");
	}

	@Test
	void givesSpelTheSameClientAddressAsTheIpKey() {
		run((mvc) -> {
			for (int i = 0; i < 3; i++) {
				assertThat(mvc.get().uri("/user").with(from("2001:db8:1:2::" + (i + 1)))).hasStatusOk()
					.headers()
					.doesNotContainHeader("RateLimit");
			}
			assertThat(mvc.get().uri("/user").with(from("2001:db8:1:3::1"))).hasStatusOk();
			assertThat(mvc.get().uri("/user").with(from("2001:db8:1:3::1"))).hasStatus(HttpStatus.TOO_MANY_REQUESTS);
		}, "ratelimit.exempt-if=spel:#ip == '2001:db8:1:2::/64'");
	}

	@Test
	void neitherCountsNorLimitsNorAnswersWithHeadersAnExemptNetwork() {
		this.runner.withBean(MeterRegistry.class, SimpleMeterRegistry::new)
			.withPropertyValues("ratelimit.exempt=10.9.0.0/16, 2001:db8:9::/48")
			.run((context) -> {
				MockMvcTester mvc = MockMvcTester.from(context);
				for (int i = 0; i < 25; i++) {
					assertThat(mvc.get().uri("/gcra").with(from("10.9.1.1"))).hasStatusOk()
						.headers()
						.doesNotContainHeader("RateLimit")
						.doesNotContainHeader("RateLimit-Policy");
					assertThat(mvc.get().uri("/gcra").with(from("2001:db8:9:1::1"))).hasStatusOk();
				}
				for (int i = 0; i < 10; i++) {
					assertThat(mvc.get().uri("/gcra").with(from("10.8.0.1"))).hasStatusOk()
						.headers()
						.containsHeader("RateLimit");
				}
				assertThat(mvc.get().uri("/gcra").with(from("10.8.0.1"))).hasStatus(HttpStatus.TOO_MANY_REQUESTS);
				MeterRegistry registry = context.getBean(MeterRegistry.class);
				assertThat(registry.get(MicrometerRateLimitMetrics.DECISIONS)
					.tags("policy", "LimitedController.gcra", "outcome", "exempt")
					.counter()
					.count()).isEqualTo(50);
				assertThat(registry.get(MicrometerRateLimitMetrics.DECISIONS)
					.tags("policy", "LimitedController.gcra", "outcome", "allowed")
					.counter()
					.count()).isEqualTo(10);
			});
	}

	@Test
	void exemptsANetworkFromOnePolicyOnly() {
		run((mvc) -> {
			for (int i = 0; i < 5; i++) {
				assertThat(mvc.get().uri("/fixed").with(from("10.9.1.1"))).hasStatusOk();
			}
			assertThat(mvc.get().uri("/user").with(from("10.9.1.1"))).hasStatusOk();
			assertThat(mvc.get().uri("/user").with(from("10.9.1.1"))).hasStatus(HttpStatus.TOO_MANY_REQUESTS);
		}, "ratelimit.policies.fixed.exempt[0]=10.9.0.0/16");
	}

	@Test
	void exemptsWhatABeanExempts() {
		run((mvc) -> {
			for (int i = 0; i < 3; i++) {
				assertThat(mvc.get().uri("/user").header("X-Internal", "yes")).hasStatusOk();
			}
			assertThat(mvc.get().uri("/user")).hasStatusOk();
			assertThat(mvc.get().uri("/user")).hasStatus(HttpStatus.TOO_MANY_REQUESTS);
		}, "ratelimit.policies.LimitedController.user.exempt-if=bean:internal");
	}

	@Test
	void limitsARequestWhoseConditionIsNoBoolean() {
		run((mvc) -> {
			assertThat(mvc.get().uri("/user").header("X-Gateway", "maybe")).hasStatusOk();
			assertThat(mvc.get().uri("/user").header("X-Gateway", "maybe")).hasStatus(HttpStatus.TOO_MANY_REQUESTS);
			assertThat(mvc.get().uri("/user").header("X-Gateway", "true")).hasStatusOk()
				.headers()
				.doesNotContainHeader("RateLimit");
		}, "ratelimit.exempt-if=spel:#request.getHeader('X-Gateway')");
	}

	@Test
	void keysAndExemptsTheClientThatATrustedProxyForwards() {
		run((mvc) -> {
			assertThat(mvc.get().uri("/user").with(from("10.0.0.1")).header("X-Forwarded-For", "198.51.100.1"))
				.hasStatusOk();
			assertThat(mvc.get().uri("/user").with(from("10.0.0.2")).header("X-Forwarded-For", "198.51.100.1"))
				.hasStatus(HttpStatus.TOO_MANY_REQUESTS);
			assertThat(mvc.get().uri("/user").with(from("10.0.0.1")).header("Forwarded", "for=198.51.100.2"))
				.hasStatusOk();
			for (int i = 0; i < 3; i++) {
				assertThat(mvc.get().uri("/user").with(from("10.0.0.1")).header("X-Forwarded-For", "198.51.100.7"))
					.hasStatusOk();
			}
			// an untrusted client writes what it likes, and stays itself
			assertThat(mvc.get().uri("/user").with(from("203.0.113.1")).header("X-Forwarded-For", "198.51.100.3"))
				.hasStatusOk();
			assertThat(mvc.get().uri("/user").with(from("203.0.113.1")).header("X-Forwarded-For", "198.51.100.4"))
				.hasStatus(HttpStatus.TOO_MANY_REQUESTS);
			assertThat(mvc.get().uri("/user").with(from("203.0.113.1")).header("X-Forwarded-For", "198.51.100.7"))
				.hasStatus(HttpStatus.TOO_MANY_REQUESTS);
		}, "ratelimit.client-address.trusted-proxies=10.0.0.0/8", "ratelimit.exempt=198.51.100.7");
	}

	@Test
	void rejectsAnInvalidNetworkNamingThePropertyAndValue() {
		failsWith("Invalid ratelimit.exempt[1]: '10.0.0.1/8' is not a network: it sets bits beyond its /8 prefix",
				"ratelimit.exempt=127.0.0.77/32,10.0.0.1/8");
		failsWith("Invalid ratelimit.client-address.trusted-proxies[0]: 'proxy.internal' is not a network",
				"ratelimit.client-address.trusted-proxies=proxy.internal");
		failsWith("Invalid ratelimit.policies.fixed.exempt[0]: '2001:db8::/129' is not a network",
				"ratelimit.policies.fixed.exempt=2001:db8::/129");
		failsWith("Invalid ratelimit.rules[0].exempt[0]: '10.0.0.0/33' is not a network",
				"ratelimit.rules[0].path=/free", "ratelimit.rules[0].limit=1", "ratelimit.rules[0].window=1s",
				"ratelimit.rules[0].exempt=10.0.0.0/33");
	}

	@Test
	void rejectsAnIpv6PrefixOutOfRange() {
		failsWith("Invalid ratelimit.client-address.ipv6-prefix: 0 is not a number of bits of an IPv6 address, "
				+ "from 1 to 128.", "ratelimit.client-address.ipv6-prefix=0");
		failsWith("Invalid ratelimit.policies.fixed.ipv6-prefix: 129 is not a number of bits of an IPv6 address",
				"ratelimit.policies.fixed.ipv6-prefix=129");
	}

	@Test
	void rejectsAnInvalidCondition() {
		failsWith("Invalid ratelimit.exempt-if: 'header:X-Internal' is not a condition; use spel:<expression> or "
				+ "bean:<name>.", "ratelimit.exempt-if=header:X-Internal");
		failsWith("Invalid ratelimit.exempt-if: '#request.' is not a SpEL expression",
				"ratelimit.exempt-if=spel:#request.");
		failsWith("Invalid ratelimit.policies.fixed.exempt-if: 'bean:nobody' names no RateLimitExemption bean",
				"ratelimit.policies.fixed.exempt-if=bean:nobody");
	}

	@Test
	void rejectsStackedLimitsWithDifferentExemptions() {
		failsWith("stacks limits with different client terms, ipv6-prefix 64, exempt [], exempt-if none",
				"ratelimit.policies.per-minute.exempt=10.0.0.0/8");
	}

	private void run(Consumer<MockMvcTester> test, String... properties) {
		this.runner.withPropertyValues(properties).run((context) -> {
			assertThat(context).hasNotFailed();
			test.accept(MockMvcTester.from(context));
		});
	}

	private void failsWith(String message, String... properties) {
		this.runner.withPropertyValues(properties).run((context) -> {
			Throwable cause = context.getStartupFailure();
			assertThat(cause).isNotNull();
			while (cause.getCause() != null) {
				cause = cause.getCause();
			}
			assertThat(cause).isInstanceOf(RateLimitConfigurationException.class).hasMessageContaining(message);
		});
	}

	private static RequestPostProcessor from(String address) {
		return (request) -> {
			request.setRemoteAddr(address);
			return request;
		};
	}

}
