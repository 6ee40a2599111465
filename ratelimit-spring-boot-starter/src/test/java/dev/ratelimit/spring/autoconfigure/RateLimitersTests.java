package dev.ratelimit.spring.autoconfigure;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import dev.ratelimit.core.Decision;
import dev.ratelimit.core.ManualTimeSource;
import dev.ratelimit.core.RateLimitStore;
import dev.ratelimit.core.RateLimiter;
import dev.ratelimit.spring.RateLimitConfigurationException;
import dev.ratelimit.spring.RateLimitExceededException;
import dev.ratelimit.spring.RateLimited;
import dev.ratelimit.spring.RateLimiters;
import dev.ratelimit.spring.changes.internal.PolicyChanges;
import dev.ratelimit.spring.web.internal.LimitCatalog;
import dev.ratelimit.spring.webmvc.RateLimitWebMvcAutoConfiguration;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.slf4j.LoggerFactory;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.http.converter.autoconfigure.HttpMessageConvertersAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.webmvc.autoconfigure.WebMvcAutoConfiguration;
import org.springframework.core.NestedExceptionUtils;
import org.springframework.http.HttpStatus;
import org.springframework.test.web.servlet.assertj.MockMvcTester;
import org.springframework.test.web.servlet.assertj.MvcTestResult;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * Tests {@link RateLimiters}: the limiters of policies declared for code alone in {@code ratelimit.policies}, and
 * of those that declarations declare, each as it is in force now.
 */
@ExtendWith({ QuietOutput.class, OutputCaptureExtension.class })
class RateLimitersTests {

	private final ManualTimeSource time = new ManualTimeSource();

	private final WebApplicationContextRunner runner = new WebApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class,
				RateLimitWebMvcAutoConfiguration.class, WebMvcAutoConfiguration.class,
				HttpMessageConvertersAutoConfiguration.class, JacksonAutoConfiguration.class))
		.withBean(ManualTimeSource.class, () -> this.time)
		.withBean(MeterRegistry.class, SimpleMeterRegistry::new)
		.withPropertyValues("ratelimit.policies.partner-api.limit=2", "ratelimit.policies.partner-api.window=10s");

	@Test
	void decidesUnderAPolicyDeclaredForCode() {
		this.runner.run((context) -> {
			RateLimiter limiter = context.getBean(RateLimiters.class).limiter("partner-api");
			assertThat(limiter.policy().limit()).isEqualTo(2);
			assertThat(limiter.tryAcquire("acme")).isTrue();
			assertThat(limiter.decide("acme").remaining()).isZero();
			assertThat(limiter.tryAcquire("acme")).isFalse();
			assertThat(limiter.tryAcquire("initech")).as("another key's quota").isTrue();
			this.time.advance(Duration.ofSeconds(5));
			assertThat(limiter.tryAcquire("acme")).isTrue();
			assertThat(context.getBean(MeterRegistry.class)
				.get("ratelimit.decisions")
				.tags("policy", "partner-api", "outcome", "rejected")
				.counter()
				.count()).isEqualTo(1);
		});
	}

	@Test
	void takesTheGivenPermitsAndRefusesNumbersThePolicyCanNeverTake() {
		this.runner.withPropertyValues("ratelimit.policies.partner-api.limit=10").run((context) -> {
			RateLimiter limiter = context.getBean(RateLimiters.class).limiter("partner-api");
			assertThat(limiter.decide("acme", 7).remaining()).isEqualTo(3);
			assertThat(limiter.tryAcquire("acme", 4)).isFalse();
			assertThat(limiter.tryAcquire("acme", 3)).isTrue();
			assertThat(limiter.tryAcquire("acme")).isFalse();
			assertThatIllegalArgumentException().isThrownBy(() -> limiter.decide("initech", 11))
				.withMessageContaining("more than the 10 permits the policy can ever hold");
		});
	}

	@Test
	void waitsForAPermitOnTheApplicationsClockOrRefusesAtOnce() {
		this.runner.run((context) -> {
			RateLimiter limiter = context.getBean(RateLimiters.class).limiter("partner-api");
			assertThat(limiter.tryAcquire("acme", 2)).isTrue();
			// the next permit is due in five seconds: a shorter wait is refused on this thread, taking nothing
			Decision refused = limiter.acquire("acme", Duration.ofSeconds(4));
			assertThat(refused.allowed()).isFalse();
			assertThat(refused.retryAfterNanos()).isEqualTo(Duration.ofSeconds(1).toNanos());
			CompletableFuture<Decision> waiting = limiter.acquireAsync("acme", Duration.ofSeconds(5));
			assertThat(waiting).isNotDone();
			assertThat(limiter.tryAcquire("acme")).as("a request that does not wait, behind the reservation")
				.isFalse();
			this.time.advance(Duration.ofSeconds(5).minusMillis(1));
			assertThat(waiting).isNotDone();
			this.time.advance(Duration.ofMillis(1));
			assertThat(waiting).isCompletedWithValueMatching((decision) -> decision.allowed()
					&& decision.delayNanos() == Duration.ofSeconds(5).toNanos());
			assertThat(context.getBean(MeterRegistry.class)
				.get("ratelimit.decisions")
				.tags("policy", "partner-api", "outcome", "delayed")
				.counter()
				.count()).as("the reservation, as the requests a leaky bucket delays").isEqualTo(1);
		});
	}

	@Test
	void refusesAWaitUnderAnAlgorithmThatCannotReserve() {
		this.runner.withPropertyValues("ratelimit.policies.partner-api.algorithm=fixed-window").run((context) -> {
			RateLimiter limiter = context.getBean(RateLimiters.class).limiter("partner-api");
			assertThatIllegalArgumentException().isThrownBy(() -> limiter.acquire("acme", Duration.ofSeconds(1)))
				.withMessageContaining("only GCRA and TOKEN_BUCKET reserve permits");
			assertThat(limiter.acquireAsync("acme", Duration.ofSeconds(1))).isCompletedExceptionally();
			assertThat(limiter.acquire("acme", Duration.ZERO).allowed()).isTrue();
		});
	}

	@Test
	void findsAPolicyByItsNameInAnyCaseAndPunctuation() {
		this.runner.run((context) -> {
			RateLimiters limiters = context.getBean(RateLimiters.class);
			assertThat(limiters.limiter("partnerApi").tryAcquire("acme")).isTrue();
			assertThat(limiters.limiter("PARTNER_API").tryAcquire("acme")).isTrue();
			assertThat(limiters.limiter("partner-api").tryAcquire("acme")).isFalse();
		});
	}

	@Test
	void acquiresOrThrowsTheExceptionThatAHandlerAnswersWith429() {
		this.runner.withUserConfiguration(PartnerController.class).run((context) -> {
			RateLimiters limiters = context.getBean(RateLimiters.class);
			assertThat(limiters.acquire("partner-api", "acme").remaining()).isOne();
			limiters.acquire("partner-api", "acme");
			RateLimitExceededException exceeded = LimitedMethodsTests
				.catchExceeded(() -> limiters.acquire("partner-api", "acme"));
			assertThat(exceeded.policy().name()).isEqualTo("partner-api");
			assertThat(exceeded.retryAfter()).isEqualTo(Duration.ofSeconds(5));
			MockMvcTester mvc = MockMvcTester.from(context);
			assertThat(mvc.get().uri("/partner?customer=globex")).hasStatusOk();
			assertThat(mvc.get().uri("/partner?customer=globex")).hasStatusOk();
			MvcTestResult rejected = mvc.get().uri("/partner?customer=globex").exchange();
			assertThat(rejected).hasStatus(HttpStatus.TOO_MANY_REQUESTS)
				.headers()
				.hasValue("Retry-After", "5")
				.hasValue("RateLimit-Policy", "\"partner-api\";q=2;w=10");
		});
	}

	@Test
	void sharesTheQuotaOfADeclarationGivenItsKey() {
		this.runner.withUserConfiguration(LimitedMethodsTests.Quotes.class).run((context) -> {
			LimitedMethodsTests.Quotes quotes = context.getBean(LimitedMethodsTests.Quotes.class);
			RateLimiter limiter = context.getBean(RateLimiters.class).limiter("quotes");
			assertThat(limiter.tryAcquire("spel:alice")).isTrue();
			quotes.quote("alice");
			assertThat(limiter.tryAcquire("spel:alice")).isFalse();
			assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(() -> quotes.quote("alice"));
		});
	}

	@Test
	void followsARuntimeChange() {
		this.runner.run((context) -> {
			RateLimiter limiter = context.getBean(RateLimiters.class).limiter("partner-api");
			context.getBean(PolicyChanges.class).change("partner-api", 3L, null, null);
			assertThat(limiter.policy().limit()).isEqualTo(3);
			assertThat(limiter.tryAcquire("acme")).isTrue();
			assertThat(limiter.tryAcquire("acme")).isTrue();
			assertThat(limiter.tryAcquire("acme")).isTrue();
			assertThat(limiter.tryAcquire("acme")).isFalse();
		});
	}

	@Test
	void decidesForCodeWhenEveryLimitOfRequestsAndCallsIsTurnedOff() {
		this.runner.withPropertyValues("ratelimit.enabled=false")
			.withUserConfiguration(LimitedMethodsTests.Quotes.class)
			.run((context) -> {
				RateLimiter limiter = context.getBean(RateLimiters.class).limiter("partner-api");
				assertThat(limiter.tryAcquire("acme")).isTrue();
				assertThat(limiter.tryAcquire("acme")).isTrue();
				assertThat(limiter.tryAcquire("acme")).isFalse();
				LimitedMethodsTests.Quotes quotes = context.getBean(LimitedMethodsTests.Quotes.class);
				for (int i = 0; i < 3; i++) {
					assertThat(quotes.quote("alice")).as("a call of a limited method").isEqualTo("quote for alice");
				}
			});
	}

	@Test
	void limitsCodeAndBeanMethodsInAnApplicationThatServesNoWebRequests() {
		new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class))
			.withPropertyValues("ratelimit.policies.partner-api.limit=2", "ratelimit.policies.partner-api.window=10s")
			.withUserConfiguration(LimitedMethodsTests.Quotes.class)
			.run((context) -> {
				RateLimiter limiter = context.getBean(RateLimiters.class).limiter("partner-api");
				assertThat(limiter.tryAcquire("acme")).isTrue();
				assertThat(limiter.tryAcquire("acme")).isTrue();
				assertThat(limiter.tryAcquire("acme")).isFalse();
				LimitedMethodsTests.Quotes quotes = context.getBean(LimitedMethodsTests.Quotes.class);
				quotes.quote("alice");
				quotes.quote("alice");
				LimitedMethodsTests.catchExceeded(() -> quotes.quote("alice"));
			});
	}

	@Test
	void keepsTheStoreWithoutSpringsWebTypesOnTheClassPath() {
		new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class))
			.withClassLoader(new FilteredClassLoader("org.springframework.web", "org.springframework.http"))
			.run((context) -> assertThat(context).hasNotFailed()
				.hasSingleBean(RateLimitStore.class)
				.doesNotHaveBean(RateLimiters.class));
	}

	@Test
	void namesTheDeclaredPoliciesWhenAskedForAnUnknownOne() {
		this.runner.run((context) -> assertThatIllegalArgumentException()
			.isThrownBy(() -> context.getBean(RateLimiters.class).limiter("partner"))
			.withMessageStartingWith("No policy named 'partner' is declared; the declared ones: [partner-api]."));
	}

	@Test
	void reportsAPolicyForCodeAtStartup(CapturedOutput output) {
		Logger logger = (Logger) LoggerFactory.getLogger(LimitCatalog.class);
		logger.setLevel(Level.INFO);
		try {
			this.runner.run((context) -> assertThat(output).contains("Rate limit 'partner-api': GCRA 2/PT10S by code "
					+ "on RateLimiters; from ratelimit.policies.partner-api"));
		}
		finally {
			logger.setLevel(null);
		}
	}

	@Test
	void stopsTheStartAtAPolicyForCodeThatSetsWhatAppliesToRequests() {
		this.runner.withPropertyValues("ratelimit.policies.partner-api.key=header:X-Api-Key")
			.run((context) -> assertThat(NestedExceptionUtils.getMostSpecificCause(context.getStartupFailure()))
				.isInstanceOf(RateLimitConfigurationException.class)
				.hasMessageStartingWith("ratelimit.policies.partner-api.key applies to requests"));
	}

	@Test
	void stillStopsTheStartAtAnOverrideOfNoDeclarationWithoutALimitAndAWindow() {
		this.runner.withPropertyValues("ratelimit.policies.qoutes.limit=5")
			.withUserConfiguration(Limited.class)
			.run((context) -> assertThat(NestedExceptionUtils.getMostSpecificCause(context.getStartupFailure()))
				.isInstanceOf(RateLimitConfigurationException.class)
				.hasMessageContaining("overrides no @RateLimited policy"));
	}

	@RestController
	static class Limited {

		@GetMapping("/quotes")
		@RateLimited(name = "quotes", limit = 1, window = "1s")
		String quotes() {
			return "quotes";
		}

	}

	@RestController
	static class PartnerController {

		private final RateLimiters limiters;

		PartnerController(RateLimiters limiters) {
			this.limiters = limiters;
		}

		@GetMapping("/partner")
		String partner(@RequestParam String customer) {
			this.limiters.acquire("partner-api", customer);
			return "called";
		}

	}

}
