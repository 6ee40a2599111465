package dev.ratelimit.spring.autoconfigure;

import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import dev.ratelimit.core.ManualTimeSource;
import dev.ratelimit.spring.PlanResolver;
import dev.ratelimit.spring.changes.internal.PolicyChanges;
import dev.ratelimit.spring.RateLimited;
import dev.ratelimit.spring.RateLimited.Plan;
import dev.ratelimit.spring.observability.internal.MicrometerRateLimitMetrics;
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
import org.springframework.http.HttpStatus;
import org.springframework.test.web.servlet.assertj.MockMvcTester;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests that a request is decided under its client's plan and at its own cost: the plan's quota in its headers,
 * body and metrics, the declaration's own limits for a request without a known plan, and a 400 for a cost that
 * its policy can never take.
 */
@ExtendWith({ QuietOutput.class, OutputCaptureExtension.class })
class PlansAndCostsTests {

	private static final Pattern UNKNOWN_PLAN = Pattern.compile("Plan '[^']*' of GET /plan");

	private static final Pattern BAD_COST = Pattern.compile("Cost '#size' of batch");

	private final ManualTimeSource time = new ManualTimeSource();

	/** The plan is the {@code X-Plan} header, as a test may say: an application would look it up. */
	private final WebApplicationContextRunner runner = new WebApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class,
				RateLimitWebMvcAutoConfiguration.class, WebMvcAutoConfiguration.class))
		.withBean(ManualTimeSource.class, () -> this.time)
		.withBean(PlanResolver.class, () -> (request) -> request.getHeader("X-Plan"))
		.withUserConfiguration(PlanController.class, BatchController.class);

	@Test
	void decidesEachPlanUnderItsOwnQuota() {
		this.runner.run((context) -> {
			MockMvcTester mvc = MockMvcTester.from(context);
			for (int i = 0; i < 4; i++) {
				assertThat(mvc.get().uri("/plan").header("X-Plan", "pro")).hasStatusOk()
					.headers()
					.hasValue("RateLimit-Policy", "\"plan:pro\";q=4;w=10");
			}
			assertThat(mvc.get().uri("/plan").header("X-Plan", "pro")).hasStatus(HttpStatus.TOO_MANY_REQUESTS)
				.bodyText()
				.contains("4 per 10 seconds (policy 'plan:pro')");
			// the same client on another plan: that plan's own state, full
			assertThat(mvc.get().uri("/plan")).hasStatusOk()
				.headers()
				.hasValue("RateLimit-Policy", "\"plan\";q=1;w=10");
			assertThat(mvc.get().uri("/plan")).hasStatus(HttpStatus.TOO_MANY_REQUESTS);
		});
	}

	@Test
	void matchesPlansIgnoringCaseAndPunctuation() {
		this.runner.run((context) -> assertThat(MockMvcTester.from(context).get().uri("/plan").header("X-Plan", "P-R-O"))
			.hasStatusOk()
			.headers()
			.hasValue("RateLimit-Policy", "\"plan:pro\";q=4;w=10"));
	}

	@Test
	void takesAPlanFromPropertiesOverTheAnnotationsAndAddsPlansOfItsOwn() {
		this.runner
			.withPropertyValues("ratelimit.policies.plan.plans.pro.limit=6", "ratelimit.policies.plan.plans.GOLD.limit=8",
					"ratelimit.policies.plan.plans.GOLD.window=1m")
			.run((context) -> {
				MockMvcTester mvc = MockMvcTester.from(context);
				assertThat(mvc.get().uri("/plan").header("X-Plan", "pro")).headers()
					.hasValue("RateLimit-Policy", "\"plan:pro\";q=6;w=10");
				assertThat(mvc.get().uri("/plan").header("X-Plan", "gold")).headers()
					.hasValue("RateLimit-Policy", "\"plan:gold\";q=8;w=60");
			});
	}

	@Test
	void decidesAnUnknownPlanByTheDeclarationsOwnLimitsAndSaysSoOncePerMinute(CapturedOutput output) {
		this.runner.run((context) -> {
			MockMvcTester mvc = MockMvcTester.from(context);
			assertThat(mvc.get().uri("/plan").header("X-Plan", "platinum")).hasStatusOk()
				.headers()
				.hasValue("RateLimit-Policy", "\"plan\";q=1;w=10");
			assertThat(mvc.get().uri("/plan").header("X-Plan", "diamond")).hasStatus(HttpStatus.TOO_MANY_REQUESTS);
			assertThat(count(UNKNOWN_PLAN, output)).isEqualTo(1);
			assertThat(output).contains("Plan 'platinum' of GET /plan is declared by none of [plan], which know [pro]: "
					+ "decided by the limits without a plan. At most one such line per minute.");
			this.time.advance(Duration.ofMinutes(1));
			mvc.get().uri("/plan").header("X-Plan", "diamond").exchange();
			assertThat(count(UNKNOWN_PLAN, output)).isEqualTo(2);
			assertThat(output).contains("; 1 more in the last minute.");
		});
	}

	/**
	 * Keyed by an API key the client sends, of which the application knows one: every key it does not recognise
	 * shares the client address' quota, so that inventing keys buys nothing.
	 */
	@Test
	void keysARequestTheResolverDoesNotRecogniseByItsAddress() {
		new WebApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class,
					RateLimitWebMvcAutoConfiguration.class, WebMvcAutoConfiguration.class))
			.withBean(ManualTimeSource.class, () -> this.time)
			.withBean(PlanResolver.class,
					() -> (request) -> "known".equals(request.getHeader("X-Api-Key")) ? PlanResolver.NO_PLAN : null)
			.withUserConfiguration(ApiKeyController.class)
			.run((context) -> {
				MockMvcTester mvc = MockMvcTester.from(context);
				assertThat(mvc.get().uri("/keyed").header("X-Api-Key", "made-up-1")).hasStatusOk();
				assertThat(mvc.get().uri("/keyed").header("X-Api-Key", "made-up-2"))
					.hasStatus(HttpStatus.TOO_MANY_REQUESTS);
				assertThat(mvc.get().uri("/keyed")).as("no key: the address' quota too")
					.hasStatus(HttpStatus.TOO_MANY_REQUESTS);
				assertThat(mvc.get().uri("/keyed").header("X-Api-Key", "known")).as("a quota of its own")
					.hasStatusOk();
				assertThat(mvc.get().uri("/keyed").header("X-Api-Key", "known"))
					.hasStatus(HttpStatus.TOO_MANY_REQUESTS);
				// a runtime change applies to the address' quota as to any
				context.getBean(PolicyChanges.class).change("keyed", 3L, null, null);
				assertThat(mvc.get().uri("/keyed").header("X-Api-Key", "made-up-3")).hasStatusOk()
					.headers()
					.hasValue("RateLimit-Policy", "\"keyed\";q=3;w=10");
			});
	}

	@Test
	void tagsTheMetricsWithThePlan() {
		this.runner.withBean(MeterRegistry.class, SimpleMeterRegistry::new).run((context) -> {
			MockMvcTester mvc = MockMvcTester.from(context);
			mvc.get().uri("/plan").header("X-Plan", "pro").exchange();
			mvc.get().uri("/plan").header("X-Plan", "unknown").exchange();
			mvc.get().uri("/plan").exchange();
			MeterRegistry registry = context.getBean(MeterRegistry.class);
			assertThat(registry.get(MicrometerRateLimitMetrics.DECISIONS)
				.tags("policy", "plan:pro", "plan", "pro", "outcome", "allowed")
				.counter()
				.count()).isEqualTo(1);
			assertThat(registry.get(MicrometerRateLimitMetrics.DECISIONS)
				.tags("policy", "plan", "plan", "default", "outcome", "rejected")
				.counter()
				.count()).isEqualTo(1);
			// an unknown plan is no tag value of its own
			assertThat(registry.find(MicrometerRateLimitMetrics.DECISIONS).tag("plan", "unknown").counters()).isEmpty();
		});
	}

	@Test
	void takesEachBatchsSizeFromOneQuota() {
		this.runner.run((context) -> {
			MockMvcTester mvc = MockMvcTester.from(context);
			assertThat(mvc.get().uri("/batch?size=7")).hasStatusOk().headers().hasValue("RateLimit", "\"batch\";r=3;t=7");
			assertThat(mvc.get().uri("/batch?size=4")).hasStatus(HttpStatus.TOO_MANY_REQUESTS)
				.headers()
				.hasValue("Retry-After", "1");
			assertThat(mvc.get().uri("/batch?size=3")).hasStatusOk().headers().hasValue("RateLimit", "\"batch\";r=0;t=10");
		});
	}

	@Test
	void answersACostThePolicyCanNeverTakeWith400AndTakesNothing(CapturedOutput output) {
		this.runner.run((context) -> {
			MockMvcTester mvc = MockMvcTester.from(context);
			assertThat(mvc.get().uri("/batch?size=11")).hasStatus(HttpStatus.BAD_REQUEST)
				.doesNotContainHeader("Retry-After")
				.doesNotContainHeader("RateLimit")
				.bodyJson()
				.isLenientlyEqualTo("""
						{"type": "about:blank", "title": "Bad Request", "status": 400,
						 "detail": "The cost of this request under policy 'batch' is 11, more than the 10 permits the policy can ever hold, so the request could never pass.",
						 "policies": ["batch"]}
						""");
			assertThat(mvc.get().uri("/batch?size=0")).hasStatus(HttpStatus.BAD_REQUEST)
				.bodyText()
				.contains("The cost of this request under policy 'batch' is '0', not a positive whole number.");
			assertThat(mvc.get().uri("/batch?size=1.5")).hasStatus(HttpStatus.BAD_REQUEST);
			assertThat(mvc.get().uri("/batch")).hasStatus(HttpStatus.BAD_REQUEST)
				.bodyText()
				.contains("is 'null', not a positive whole number");
			assertThat(count(BAD_COST, output)).isEqualTo(1);
			assertThat(output).contains("Cost '#size' of batch for GET /batch is 11, more than the 10 permits").doesNotContain("\tat ");
			assertThat(mvc.get().uri("/batch?size=10")).hasStatusOk();
		});
	}

	@Test
	void reportsEveryPlansLimitsAndTheCostExpressionAtStartup(CapturedOutput output) {
		Logger logger = (Logger) LoggerFactory.getLogger(LimitCatalog.class);
		logger.setLevel(Level.INFO);
		try {
			this.runner.run((context) -> assertThat(output)
				.contains("Rate limit 'plan': GCRA 1/PT10S by ip on GET,HEAD /plan; from @RateLimited on "
						+ PlanController.class.getName() + ".plan()")
				.contains("Rate limit 'plan:pro': GCRA 4/PT10S on plan pro by ip on GET,HEAD /plan; from @RateLimited on ")
				.contains("Rate limit 'batch': TOKEN_BUCKET 10/PT10S cost '#size' by ip on GET,HEAD /batch; from "));
		}
		finally {
			logger.setLevel(null);
		}
	}

	@Test
	void decidesARuleUnderItsPlansAndCost() {
		this.runner
			.withPropertyValues("ratelimit.rules[0].path=/orders/{count}", "ratelimit.rules[0].limit=2",
					"ratelimit.rules[0].window=10s", "ratelimit.rules[0].name=orders",
					"ratelimit.rules[0].plans.pro.limit=20", "ratelimit.rules[0].cost-expression=#count")
			.withUserConfiguration(OrderController.class)
			.run((context) -> {
				MockMvcTester mvc = MockMvcTester.from(context);
				assertThat(mvc.get().uri("/orders/15").header("X-Plan", "pro")).hasStatusOk()
					.headers()
					.hasValue("RateLimit-Policy", "\"orders:pro\";q=20;w=10")
					.hasValue("RateLimit", "\"orders:pro\";r=5;t=8");
				assertThat(mvc.get().uri("/orders/3")).hasStatus(HttpStatus.BAD_REQUEST);
				assertThat(mvc.get().uri("/orders/2")).hasStatusOk().headers().hasValue("RateLimit-Policy",
						"\"orders\";q=2;w=10");
			});
	}

	private static int count(Pattern pattern, CapturedOutput output) {
		Matcher matcher = pattern.matcher(output.getAll());
		int count = 0;
		while (matcher.find()) {
			count++;
		}
		return count;
	}

	@RestController
	static class ApiKeyController {

		@GetMapping("/keyed")
		@RateLimited(limit = 1, window = "10s", key = "header:X-Api-Key", name = "keyed",
				plans = @Plan(name = "pro", limit = 4))
		String keyed() {
			return "keyed";
		}

	}

	@RestController
	static class PlanController {

		@GetMapping("/plan")
		@RateLimited(limit = 1, window = "10s", name = "plan", plans = @Plan(name = "pro", limit = 4))
		String plan() {
			return "plan";
		}

	}

	@RestController
	static class OrderController {

		@GetMapping("/orders/{count}")
		String orders() {
			return "orders";
		}

	}

	@RestController
	static class BatchController {

		@GetMapping("/batch")
		@RateLimited(limit = 10, window = "10s", algorithm = dev.ratelimit.core.Algorithm.TOKEN_BUCKET,
				costExpression = "#size", name = "batch")
		String batch(@RequestParam(required = false) String size) {
			return "batch";
		}

	}

}
