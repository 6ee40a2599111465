package dev.ratelimit.spring.autoconfigure;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import dev.ratelimit.spring.KeyResolver;
import dev.ratelimit.spring.RateLimited;
import dev.ratelimit.spring.web.internal.LimitCatalog;
import dev.ratelimit.spring.webflux.RateLimitWebFluxAutoConfiguration;
import dev.ratelimit.spring.webflux.ReactiveKeyResolver;
import dev.ratelimit.spring.webmvc.RateLimitWebMvcAutoConfiguration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.AbstractApplicationContextRunner;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.webflux.autoconfigure.WebFluxAutoConfiguration;
import org.springframework.boot.webmvc.autoconfigure.WebMvcAutoConfiguration;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests that the start logs every effective policy on a line of its own: where it comes from, the routes it
 * limits, its key, algorithm and limits.
 */
@ExtendWith({ QuietOutput.class, OutputCaptureExtension.class })
class StartupReportTests {

	private final Logger logger = (Logger) LoggerFactory.getLogger(LimitCatalog.class);

	private final WebApplicationContextRunner runner = new WebApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class,
				RateLimitWebMvcAutoConfiguration.class, WebMvcAutoConfiguration.class))
		.withBean("apiKeyResolver", KeyResolver.class, () -> (request) -> request.getHeader("X-Key"))
		.withUserConfiguration(TestControllers.LimitedController.class, TestControllers.ClassLevelController.class);

	@BeforeEach
	void logInfo() {
		this.logger.setLevel(Level.INFO);
	}

	@AfterEach
	void restoreLevel() {
		this.logger.setLevel(null);
	}

	@Test
	void listsEachPolicyWithItsOriginRoutesKeyAndLimits(CapturedOutput output) {
		assertListsEachPolicy(this.runner, output);
	}

	@Test
	void listsEachPolicyOnWebFluxAsOnSpringMvc(CapturedOutput output) {
		assertListsEachPolicy(new ReactiveWebApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class,
					RateLimitWebFluxAutoConfiguration.class, WebFluxAutoConfiguration.class))
			.withBean("apiKeyResolver", ReactiveKeyResolver.class,
					() -> (exchange) -> Mono.justOrEmpty(exchange.getRequest().getHeaders().getFirst("X-Key")))
			.withUserConfiguration(TestControllers.LimitedController.class, TestControllers.ClassLevelController.class),
				output);
	}

	private static void assertListsEachPolicy(AbstractApplicationContextRunner<?, ?, ?> runner,
			CapturedOutput output) {
		runner
			.withPropertyValues("ratelimit.policies.LimitedController.gcra.limit=3", "ratelimit.rules[0].path=/api/**",
					"ratelimit.rules[0].methods=GET,POST", "ratelimit.rules[0].limit=2",
					"ratelimit.rules[0].window=1m", "ratelimit.rules[0].key=header:X-Key",
					"ratelimit.rules[1].path=/login", "ratelimit.rules[1].limit=5", "ratelimit.rules[1].window=1m",
					"ratelimit.rules[1].before-security=true", "ratelimit.rules[1].count-status=401,403")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(output).contains("Rate limiting with InMemoryRateLimitStore: ")
					.contains("Rate limit 'LimitedController.gcra': GCRA 3/PT10S by ip on GET,HEAD /gcra; from "
							+ "@RateLimited on " + TestControllers.LimitedController.class.getName()
							+ ".gcra() with ratelimit.policies.LimitedController.gcra (\"ratelimit.policies."
							+ "LimitedController.gcra.limit\" from property source \"test\")")
					.contains("Rate limit 'rule-0': GCRA 2/PT1M by header:X-Key on GET,POST,HEAD /api/**; from "
							+ "ratelimit.rules[0]")
					.contains("Rate limit 'rule-1': GCRA 5/PT1M counting responses [401, 403] by ip on * /login "
							+ "before Spring Security; from ratelimit.rules[1]")
					.containsPattern("Rate limit 'ClassLevelController': GCRA \\S+ by ip on GET,HEAD /class/a, "
							+ "GET,HEAD /class/b; from @RateLimited on class "
							+ TestControllers.ClassLevelController.class.getName().replace("$", "\\$"));
			});
	}

	@Test
	void listsTheRoutesOfAPolicyThatLimitsManyInFullAtDebugOnly(CapturedOutput output) {
		this.logger.setLevel(Level.DEBUG);
		this.runner.withUserConfiguration(ManyRoutes.class).run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(output).contains("Rate limit 'ManyRoutes': GCRA 1/PT1S by ip on GET,HEAD /r1, GET,HEAD /r2, "
					+ "GET,HEAD /r3, GET,HEAD /r4, GET,HEAD /r5 and 2 more, listed at DEBUG; from @RateLimited on class")
				.contains("Rate limit 'ManyRoutes' limits GET,HEAD /r1, GET,HEAD /r2, GET,HEAD /r3, GET,HEAD /r4, "
						+ "GET,HEAD /r5, GET,HEAD /r6, GET,HEAD /r7");
		});
	}

	@RestController
	@RateLimited(limit = 1, window = "1s")
	static class ManyRoutes {

		@GetMapping({ "/r1", "/r2", "/r3", "/r4" })
		String first() {
			return "first";
		}

		@GetMapping({ "/r5", "/r6", "/r7" })
		String second() {
			return "second";
		}

	}

}
