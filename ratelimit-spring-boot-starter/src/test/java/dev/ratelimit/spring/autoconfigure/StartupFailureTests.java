package dev.ratelimit.spring.autoconfigure;

import dev.ratelimit.spring.PlanResolver;
import dev.ratelimit.spring.RateLimitConfigurationException;
import dev.ratelimit.spring.RateLimited;
import dev.ratelimit.spring.webmvc.RateLimitWebMvcAutoConfiguration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.webmvc.autoconfigure.WebMvcAutoConfiguration;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests that every kind of invalid limit stops the start with a message naming where it is and the value.
 */
@ExtendWith(QuietOutput.class)
class StartupFailureTests {

	private final WebApplicationContextRunner runner = new WebApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class,
				RateLimitWebMvcAutoConfiguration.class, WebMvcAutoConfiguration.class));

	@Test
	void rejectsUnparsableWindow() {
		assertFailure(BadWindow.class, "Invalid @RateLimited on " + BadWindow.class.getName()
				+ ".get(): window '10x' is not a duration: use a whole number with ms, s, m, h or d (500ms, 10s, 1m, 1h, 1d) or ISO-8601 (PT10S)");
	}

	@Test
	void rejectsZeroLimit() {
		assertFailure(ZeroLimit.class, "Invalid @RateLimited on " + ZeroLimit.class.getName()
				+ ".get(): limit of policy 'ZeroLimit.get' must be at least 1, was 0");
	}

	@Test
	void rejectsMoreThanOneAlgorithm() {
		assertFailure(TwoAlgorithms.class, "Invalid @RateLimited on " + TwoAlgorithms.class.getName()
				+ ".get(): algorithm names 2 algorithms, at most one is allowed.");
	}

	@Test
	void rejectsDuplicatePolicyName() {
		String controller = "@RateLimited on " + DuplicateName.class.getName();
		this.runner.withUserConfiguration(DuplicateName.class)
			.run((context) -> assertThat(rootCause(context.getStartupFailure()))
				.isInstanceOf(RateLimitConfigurationException.class)
				.message()
				.startsWith("Policy name 'shared' is declared twice: by " + controller)
				.contains(controller + ".a()", controller + ".b()")
				.endsWith(". Each policy's name identifies its state, headers and metrics."));
	}

	@Test
	void rejectsUnparsableExpression() {
		assertFailure(BadExpression.class, "Invalid key of @RateLimited on " + BadExpression.class.getName()
				+ ".get(): '#request.(' is not a SpEL expression: ");
	}

	@Test
	void rejectsUnknownResolverBean() {
		assertFailure(UnknownResolver.class, "Invalid key of @RateLimited on " + UnknownResolver.class.getName()
				+ ".get(): 'bean:nowhere' names no KeyResolver bean: ");
	}

	@Test
	void rejectsUnknownKind() {
		assertFailure(UnknownKey.class, "Invalid key of @RateLimited on " + UnknownKey.class.getName()
				+ ".get(): 'session' is not a key; use ip, user, global, header:<name>, bean:<name>, spel:<expression> or #<expression>.");
	}

	@Test
	void rejectsNoDelayOnAnAlgorithmThatDoesNotQueue() {
		assertFailure(NoDelayOnGcra.class, "Invalid @RateLimited on " + NoDelayOnGcra.class.getName()
				+ ".get(): noDelay applies only to LEAKY_BUCKET, the algorithm that queues requests; GCRA rejects them instead.");
	}

	@Test
	void rejectsDelayAfterOnAnAlgorithmThatDoesNotQueue() {
		assertFailure(DelayAfterOnTokenBucket.class, "Invalid @RateLimited on "
				+ DelayAfterOnTokenBucket.class.getName()
				+ ".get(): delayAfter (2) applies only to LEAKY_BUCKET, the algorithm that queues requests; TOKEN_BUCKET rejects them instead.");
	}

	@Test
	void rejectsDelayAfterTogetherWithNoDelay() {
		assertFailure(DelayAfterAndNoDelay.class, "Invalid @RateLimited on " + DelayAfterAndNoDelay.class.getName()
				+ ".get(): delayAfter (2) and noDelay are both set: noDelay passes the whole burst at once, delayAfter only its first requests.");
	}

	@Test
	void rejectsDelayAfterBeyondTheBurst() {
		assertFailure(DelayAfterBeyondBurst.class, "Invalid @RateLimited on " + DelayAfterBeyondBurst.class.getName()
				+ ".get(): delayAfter must be between 0 and the burst (5), was 6.");
	}

	@Test
	void rejectsAnOverrideThatLeavesNoDelayOnAnAlgorithmThatDoesNotQueue() {
		this.runner.withUserConfiguration(Shaped.class)
			.withPropertyValues("ratelimit.policies.shaped.algorithm=gcra")
			.run((context) -> assertThat(rootCause(context.getStartupFailure())).hasMessage("Invalid @RateLimited on "
					+ Shaped.class.getName()
					+ ".get() with ratelimit.policies.shaped: noDelay applies only to LEAKY_BUCKET, the algorithm that queues requests; GCRA rejects them instead."));
	}

	@Test
	void rejectsAnOverrideWithBothDelayAfterAndNoDelay() {
		this.runner.withUserConfiguration(Shaped.class)
			.withPropertyValues("ratelimit.policies.shaped.delay-after=1", "ratelimit.policies.shaped.no-delay=true")
			.run((context) -> assertThat(rootCause(context.getStartupFailure())).hasMessage("Invalid @RateLimited on "
					+ Shaped.class.getName()
					+ ".get() with ratelimit.policies.shaped: delay-after (1) and no-delay are both set: no-delay passes the whole burst at once, delay-after only its first requests."));
	}

	@Test
	void rejectsRuleWithDelayAfterBeyondTheBurst() {
		assertRuleFailure("Invalid ratelimit.rules[0]: delay-after must be between 0 and the burst (5), was 9.",
				"ratelimit.rules[0].path=/api/**", "ratelimit.rules[0].limit=2", "ratelimit.rules[0].window=1s",
				"ratelimit.rules[0].algorithm=leaky-bucket", "ratelimit.rules[0].burst=5",
				"ratelimit.rules[0].delay-after=9");
	}

	@Test
	void rejectsRuleWithNoDelayOnAnAlgorithmThatDoesNotQueue() {
		assertRuleFailure(
				"Invalid ratelimit.rules[0]: no-delay applies only to LEAKY_BUCKET, the algorithm that queues requests; SLIDING_LOG rejects them instead.",
				"ratelimit.rules[0].path=/api/**", "ratelimit.rules[0].limit=2", "ratelimit.rules[0].window=1s",
				"ratelimit.rules[0].algorithm=sliding-log", "ratelimit.rules[0].no-delay=true");
	}

	@Test
	void rejectsInvalidOverride() {
		this.runner.withUserConfiguration(Valid.class)
			.withPropertyValues("ratelimit.policies.valid.limit=0")
			.run((context) -> assertThat(rootCause(context.getStartupFailure()))
				.hasMessage("Invalid @RateLimited on " + Valid.class.getName()
						+ ".get() with ratelimit.policies.valid: limit of policy 'valid' must be at least 1, was 0"));
	}

	@Test
	void rejectsOverrideOfUnknownPolicy() {
		this.runner.withUserConfiguration(Valid.class)
			.withPropertyValues("ratelimit.policies.vaild.limit=5")
			.run((context) -> assertThat(rootCause(context.getStartupFailure()))
				.hasMessage("ratelimit.policies.vaild (\"ratelimit.policies.vaild.limit\" from property source \"test\") "
						+ "overrides no @RateLimited policy; the closest declared policies: [valid]."));
	}

	@Test
	void rejectsUnknownAlgorithmInProperties() {
		this.runner.withPropertyValues("ratelimit.default-algorithm=LEAKY")
			.run((context) -> assertThat(messages(context.getStartupFailure()))
				.contains("Failed to bind properties under 'ratelimit.default-algorithm'", "LEAKY"));
	}

	@Test
	void rejectsAnOverrideValueOfTheWrongTypeNamingTheProperty() {
		this.runner.withUserConfiguration(Valid.class)
			.withPropertyValues("ratelimit.policies.valid.limit=ten")
			.run((context) -> assertThat(messages(context.getStartupFailure()))
				.contains("Failed to bind properties under 'ratelimit.policies.valid.limit'", "ten"));
	}

	@Test
	void rejectsNonPositiveMaxKeys() {
		this.runner.withPropertyValues("ratelimit.max-keys=0")
			.run((context) -> assertThat(rootCause(context.getStartupFailure()))
				.hasMessage("Invalid ratelimit.max-keys: maxKeys must be at least 1, was 0"));
	}

	@ParameterizedTest
	@ValueSource(strings = { "0", "1", "-0.2", "1.5" })
	void rejectsANearLimitShareOutsideZeroAndOne(String share) {
		this.runner.withPropertyValues("ratelimit.near-limit-share=" + share)
			.run((context) -> assertThat(rootCause(context.getStartupFailure()))
				.isInstanceOf(RateLimitConfigurationException.class)
				.hasMessage("Invalid ratelimit.near-limit-share: " + Double.parseDouble(share)
						+ " is not a share of a limit, greater than 0 and less than 1."));
	}

	@Test
	void rejectsRuleWithoutPath() {
		assertRuleFailure("ratelimit.rules[0].path is required.", "ratelimit.rules[0].limit=1",
				"ratelimit.rules[0].window=1s");
	}

	@Test
	void rejectsRuleWithZeroLimit() {
		assertRuleFailure("Invalid ratelimit.rules[0]: limit of policy 'rule-0' must be at least 1, was 0",
				"ratelimit.rules[0].path=/api/**", "ratelimit.rules[0].limit=0", "ratelimit.rules[0].window=1s");
	}

	@Test
	void rejectsRuleWithBadPattern() {
		assertRuleFailure("Invalid ratelimit.rules[0].path: '/api/{id' is not a path pattern: ",
				"ratelimit.rules[0].path=/api/{id", "ratelimit.rules[0].limit=1", "ratelimit.rules[0].window=1s");
	}

	@Test
	void rejectsRuleWithUnknownMethod() {
		assertRuleFailure("Invalid ratelimit.rules[0].methods: 'FETCH' is not an HTTP method.",
				"ratelimit.rules[0].path=/api/**", "ratelimit.rules[0].methods=GET,FETCH",
				"ratelimit.rules[0].limit=1", "ratelimit.rules[0].window=1s");
	}

	@Test
	void rejectsRuleWithBadWindowInTheAnnotationsWords() {
		assertRuleFailure("Invalid ratelimit.rules[0]: window '10x' is not a duration: use a whole number with ms, s, "
				+ "m, h or d (500ms, 10s, 1m, 1h, 1d) or ISO-8601 (PT10S)", "ratelimit.rules[0].path=/api/**",
				"ratelimit.rules[0].limit=1", "ratelimit.rules[0].window=10x");
	}

	@Test
	void rejectsABareNumberAsWindowOfARule() {
		assertRuleFailure("Invalid ratelimit.rules[0]: window '10' is not a duration: use a whole number with ms, s, "
				+ "m, h or d (500ms, 10s, 1m, 1h, 1d) or ISO-8601 (PT10S)", "ratelimit.rules[0].path=/api/**",
				"ratelimit.rules[0].limit=1", "ratelimit.rules[0].window=10");
	}

	@Test
	void rejectsABareNumberAsWindowOfAnOverride() {
		this.runner.withUserConfiguration(Valid.class)
			.withPropertyValues("ratelimit.policies.valid.window=10")
			.run((context) -> assertThat(rootCause(context.getStartupFailure())).hasMessage("Invalid @RateLimited on "
					+ Valid.class.getName() + ".get() with ratelimit.policies.valid: window '10' is not a duration: "
					+ "use a whole number with ms, s, m, h or d (500ms, 10s, 1m, 1h, 1d) or ISO-8601 (PT10S)"));
	}

	@Test
	void rejectsABareNumberAsWindowOfAnAnnotation() {
		assertFailure(BareNumberWindow.class, "Invalid @RateLimited on " + BareNumberWindow.class.getName()
				+ ".get(): window '10' is not a duration: use a whole number with ms, s, m, h or d (500ms, 10s, 1m, "
				+ "1h, 1d) or ISO-8601 (PT10S)");
	}

	@Test
	void rejectsMicrosecondsThatSpringBootWouldAccept() {
		assertRuleFailure("Invalid ratelimit.rules[0]: window '500us' is not a duration",
				"ratelimit.rules[0].path=/api/**", "ratelimit.rules[0].limit=1", "ratelimit.rules[0].window=500us");
	}

	@Test
	void rejectsANegativeConcurrencyOfARule() {
		assertRuleFailure("Invalid ratelimit.rules[0]: concurrency must be 0, for none, or at least 1, was -1.",
				"ratelimit.rules[0].path=/api/**", "ratelimit.rules[0].limit=1", "ratelimit.rules[0].window=1s",
				"ratelimit.rules[0].concurrency=-1");
	}

	@Test
	void rejectsAnUnknownFieldOfARule() {
		assertRuleFailure("Unknown property ratelimit.rules[0].method (\"ratelimit.rules[0].method\" from property "
				+ "source \"test\"): did you mean ratelimit.rules[0].methods?", "ratelimit.rules[0].path=/api/**",
				"ratelimit.rules[0].method=GET", "ratelimit.rules[0].limit=1", "ratelimit.rules[0].window=1s");
	}

	@Test
	void rejectsAMisspeltAlgorithmField() {
		assertRuleFailure("Unknown property ratelimit.rules[0].algoritm (\"ratelimit.rules[0].algoritm\" from "
				+ "property source \"test\"): did you mean ratelimit.rules[0].algorithm?",
				"ratelimit.rules[0].path=/api/**", "ratelimit.rules[0].algoritm=sliding-log",
				"ratelimit.rules[0].limit=1", "ratelimit.rules[0].window=1s");
	}

	@Test
	void rejectsAnUnknownFieldOfAnOverride() {
		this.runner.withUserConfiguration(Valid.class)
			.withPropertyValues("ratelimit.policies.Demo.valid.limt=5")
			.run((context) -> assertThat(rootCause(context.getStartupFailure()))
				.hasMessage("Unknown property ratelimit.policies.demo.valid.limt (\"ratelimit.policies.Demo.valid.limt\" "
						+ "from property source \"test\"): did you mean ratelimit.policies.demo.valid.limit?"));
	}

	@Test
	void acceptsAnEmptyListOfRulesAsYamlWritesIt() {
		// YAML's rules: [] reaches the environment as the list itself, written empty
		this.runner.withUserConfiguration(Valid.class)
			.withPropertyValues("ratelimit.rules=", "ratelimit.policies=")
			.run((context) -> assertThat(context).hasNotFailed());
	}

	@Test
	void rejectsAnUnknownTopLevelProperty() {
		this.runner.withUserConfiguration(Valid.class)
			.withPropertyValues("ratelimit.defualt-algorithm=sliding-log")
			.run((context) -> assertThat(rootCause(context.getStartupFailure()))
				.hasMessage("Unknown property ratelimit.defualt-algorithm (\"ratelimit.defualt-algorithm\" from "
						+ "property source \"test\"): did you mean ratelimit.default-algorithm?"));
	}

	@Test
	void rejectsAnUnknownNestedProperty() {
		this.runner.withUserConfiguration(Valid.class)
			.withPropertyValues("ratelimit.headers.legacyy=true")
			.run((context) -> assertThat(rootCause(context.getStartupFailure()))
				.hasMessageContaining("Unknown property ratelimit.headers.legacyy")
				.hasMessageEndingWith("did you mean ratelimit.headers.legacy?"));
	}

	@Test
	void acceptsEveryKnownPropertyInEverySpelling() {
		this.runner.withUserConfiguration(Valid.class)
			.withPropertyValues("ratelimit.defaultAlgorithm=gcra", "ratelimit.max-keys=10",
					"ratelimit.redis.keyPrefix=x:", "ratelimit.redis.failure-policy=allow", "ratelimit.headers.legacy=true",
					"ratelimit.client.max-attempts=2", "ratelimit.rules[0].path=/other/**",
					"ratelimit.rules[0].methods[0]=GET", "ratelimit.rules[0].limit=1", "ratelimit.rules[0].window=1s",
					"ratelimit.rules[0].no-delay=false", "ratelimit.policies.valid.noDelay=false")
			.run((context) -> assertThat(context).hasNotFailed());
	}

	@Test
	void rejectsARulePathWithoutLeadingSlash() {
		assertRuleFailure("Invalid ratelimit.rules[0].path: 'api/**' does not start with '/', so no request path can "
				+ "ever match it.", "ratelimit.rules[0].path=api/**", "ratelimit.rules[0].limit=1",
				"ratelimit.rules[0].window=1s");
	}

	@Test
	void rejectsAnOverrideOfADottedNameThatMatchesNoPolicy() {
		this.runner.withUserConfiguration(DemoController.class)
			.withPropertyValues("ratelimit.policies.DemoControler.gcra.limit=1")
			.run((context) -> assertThat(rootCause(context.getStartupFailure()))
				.hasMessage("ratelimit.policies.DemoControler.gcra (\"ratelimit.policies.DemoControler.gcra.limit\" "
						+ "from property source \"test\") overrides no @RateLimited policy; the closest declared "
						+ "policies: [DemoController.gcra, DemoController.user]."));
	}

	@Test
	void rejectsAnOverrideOfARulesPolicy() {
		this.runner.withUserConfiguration(Valid.class)
			.withPropertyValues("ratelimit.rules[0].path=/other/**", "ratelimit.rules[0].limit=1",
					"ratelimit.rules[0].window=1s", "ratelimit.policies.rule-0.limit=5")
			.run((context) -> assertThat(rootCause(context.getStartupFailure()))
				.hasMessageContaining("names a policy of ratelimit.rules, which its rule sets itself"));
	}

	@Test
	void rejectsAShadowSettingOfAnUnknownPolicy() {
		this.runner.withUserConfiguration(Valid.class)
			.withPropertyValues("ratelimit.policies.vaild.shadow=true")
			.run((context) -> assertThat(rootCause(context.getStartupFailure()))
				.hasMessage("ratelimit.policies.vaild (\"ratelimit.policies.vaild.shadow\" from property source \"test\") "
						+ "overrides no @RateLimited policy; the closest declared policies: [valid]."));
	}

	@Test
	void rejectsAnOverrideOfARulesPolicyThatSetsMoreThanItsShadow() {
		this.runner.withUserConfiguration(Valid.class)
			.withPropertyValues("ratelimit.rules[0].path=/other/**", "ratelimit.rules[0].limit=1",
					"ratelimit.rules[0].window=1s", "ratelimit.policies.rule-0.shadow=true",
					"ratelimit.policies.rule-0.limit=5")
			.run((context) -> assertThat(rootCause(context.getStartupFailure()))
				.hasMessageContaining("names a policy of ratelimit.rules, which its rule sets itself (only its shadow "
						+ "may be set here)"));
	}

	@Test
	void rejectsPolicyNamesThatDifferOnlyInPunctuation() {
		this.runner.withUserConfiguration(AlikeNames.class)
			.run((context) -> assertThat(rootCause(context.getStartupFailure()))
				.isInstanceOf(RateLimitConfigurationException.class)
				.hasMessageContainingAll("Policy names '", "'api-orders'", "'api.orders'",
						"differ only in case or punctuation"));
	}

	@Test
	void describesTheFailureWithoutStackTrace() {
		this.runner.withUserConfiguration(ZeroLimit.class).run((context) -> {
			FailureAnalysis analysis = new RateLimitFailureAnalyzer().analyze(context.getStartupFailure());
			assertThat(analysis).isNotNull();
			assertThat(analysis.getDescription()).startsWith("Invalid @RateLimited on " + ZeroLimit.class.getName());
			assertThat(analysis.getAction())
				.isEqualTo("Fix the declaration, or its values under ratelimit.policies.ZeroLimit.get.");
		});
	}

	@Test
	void rejectsACountedStatusThatIsNoHttpStatus() {
		assertRuleFailure("Invalid ratelimit.rules[0].count-status: 42 is not an HTTP status, from 100 to 599.",
				"ratelimit.rules[0].path=/login", "ratelimit.rules[0].limit=5", "ratelimit.rules[0].window=1m",
				"ratelimit.rules[0].count-status=401,42");
	}

	@Test
	void rejectsACountedStatusOfAnOverrideThatIsNoHttpStatus() {
		this.runner.withUserConfiguration(Valid.class)
			.withPropertyValues("ratelimit.policies.valid.count-status=1000")
			.run((context) -> assertThat(rootCause(context.getStartupFailure())).hasMessage("Invalid @RateLimited on "
					+ Valid.class.getName()
					+ ".get() with ratelimit.policies.valid count-status: 1000 is not an HTTP status, from 100 to 599."));
	}

	@Test
	void rejectsTheUserKeyBeforeSpringSecurity() {
		assertRuleFailure("Invalid ratelimit.rules[0].key: 'user' is never known to a rule with before-security",
				"ratelimit.rules[0].path=/login", "ratelimit.rules[0].limit=5", "ratelimit.rules[0].window=1m",
				"ratelimit.rules[0].before-security=true", "ratelimit.rules[0].key=user");
	}

	@Test
	void rejectsStackedLimitsCountingDifferentStatuses() {
		assertFailure(MixedCounting.class, "@RateLimited on " + MixedCounting.class.getName()
				+ ".get() stacks limits that count different outcomes, responses [401] (");
	}

	@Test
	void rejectsPlansWithoutAPlanResolver() {
		assertFailure(Planned.class, "@RateLimited on " + Planned.class.getName()
				+ ".get() declares plans [pro], but the application has no PlanResolver bean to tell which plan a request is on.");
	}

	@Test
	void rejectsPlansWithTwoPlanResolvers() {
		this.runner.withUserConfiguration(Planned.class)
			.withBean("first", PlanResolver.class, () -> (request) -> "pro")
			.withBean("second", PlanResolver.class, () -> (request) -> "pro")
			.run((context) -> assertThat(rootCause(context.getStartupFailure()))
				.hasMessageContaining("declares plans [pro], but the application has 2 PlanResolver beans"));
	}

	@Test
	void rejectsPlansDeclaredOnlyInPropertiesWithoutAPlanResolver() {
		this.runner.withUserConfiguration(Valid.class)
			.withPropertyValues("ratelimit.policies.valid.plans.gold.limit=5")
			.run((context) -> assertThat(rootCause(context.getStartupFailure()))
				.hasMessageContaining("declares plans [gold], but the application has no PlanResolver bean"));
	}

	@Test
	void rejectsAnInvalidPlanName() {
		assertFailure(BadPlanName.class, "Invalid @RateLimited on " + BadPlanName.class.getName()
				+ ".get(): plan name 'pro plan' is invalid: use 1 to 50 letters, digits or the characters - _.");
	}

	@Test
	void rejectsPlansThatDifferOnlyInCase() {
		assertFailure(AlikePlans.class, "Invalid @RateLimited on " + AlikePlans.class.getName()
				+ ".get(): plans 'pro' and 'PRO' differ only in case or punctuation, which plans ignore.");
	}

	@Test
	void rejectsAPlanWithABurstOnAWindowAlgorithm() {
		assertFailure(WindowPlanWithBurst.class, "Invalid @RateLimited on " + WindowPlanWithBurst.class.getName()
				+ ".get() plan 'pro': burst of policy 'WindowPlanWithBurst.get:pro' is 20, but FIXED_WINDOW has no burst");
	}

	@Test
	void rejectsAnInvalidPlanLimitInProperties() {
		this.runner.withUserConfiguration(Planned.class)
			.withBean(PlanResolver.class, () -> (request) -> "pro")
			.withPropertyValues("ratelimit.policies.planned.plans.pro.limit=0")
			.run((context) -> assertThat(rootCause(context.getStartupFailure())).hasMessageStartingWith(
					"Invalid @RateLimited on " + Planned.class.getName() + ".get() with ratelimit.policies.planned "
							+ "plan 'pro' with ratelimit.policies.planned.plans.pro: limit of policy 'planned:pro' must be at least 1, was 0"));
	}

	@Test
	void rejectsAnUnknownFieldOfAPlan() {
		this.runner.withUserConfiguration(Planned.class)
			.withBean(PlanResolver.class, () -> (request) -> "pro")
			.withPropertyValues("ratelimit.policies.planned.plans.pro.limt=5")
			.run((context) -> assertThat(rootCause(context.getStartupFailure())).hasMessageStartingWith(
					"Unknown property ratelimit.policies.planned.plans.pro.limt"));
	}

	@Test
	void rejectsACostExpressionTogetherWithAConstantCost() {
		assertFailure(CostAndExpression.class, "Invalid @RateLimited on " + CostAndExpression.class.getName()
				+ ".get(): cost (2) and costExpression ('#size') are both set: a request's cost is one or the other.");
	}

	@Test
	void rejectsAnUnparsableCostExpression() {
		assertFailure(BadCostExpression.class, "Invalid @RateLimited on " + BadCostExpression.class.getName()
				+ ".get(): costExpression '#size +' is not a SpEL expression: ");
	}

	@Test
	void rejectsAnUnparsableCostExpressionOfARule() {
		assertRuleFailure("Invalid ratelimit.rules[0]: costExpression '(' is not a SpEL expression: ",
				"ratelimit.rules[0].path=/api/**", "ratelimit.rules[0].limit=2", "ratelimit.rules[0].window=1s",
				"ratelimit.rules[0].cost-expression=(");
	}

	private void assertFailure(Class<?> controller, String message) {
		this.runner.withUserConfiguration(controller)
			.run((context) -> assertThat(rootCause(context.getStartupFailure()))
				.isInstanceOf(RateLimitConfigurationException.class)
				.message()
				.startsWith(message));
	}

	private void assertRuleFailure(String message, String... properties) {
		this.runner.withPropertyValues(properties)
			.run((context) -> assertThat(rootCause(context.getStartupFailure()))
				.isInstanceOf(RateLimitConfigurationException.class)
				.message()
				.startsWith(message));
	}

	private static Throwable rootCause(Throwable failure) {
		Throwable cause = failure;
		while (cause.getCause() != null) {
			cause = cause.getCause();
		}
		return cause;
	}

	private static String messages(Throwable failure) {
		StringBuilder messages = new StringBuilder();
		for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
			messages.append(cause.getMessage()).append('\n');
		}
		return messages.toString();
	}

	@RestController
	static class MixedCounting {

		@GetMapping("/mixed")
		@RateLimited(limit = 5, window = "1m", countStatus = 401)
		@RateLimited(limit = 50, window = "1h")
		void get() {
		}

	}

	@RestController
	static class Planned {

		@GetMapping("/planned")
		@RateLimited(limit = 1, window = "1s", name = "planned", plans = @RateLimited.Plan(name = "pro", limit = 5))
		void get() {
		}

	}

	@RestController
	static class BadPlanName {

		@GetMapping("/bad-plan")
		@RateLimited(limit = 1, window = "1s", plans = @RateLimited.Plan(name = "pro plan", limit = 5))
		void get() {
		}

	}

	@RestController
	static class AlikePlans {

		@GetMapping("/alike-plans")
		@RateLimited(limit = 1, window = "1s",
				plans = { @RateLimited.Plan(name = "pro", limit = 5), @RateLimited.Plan(name = "PRO", limit = 6) })
		void get() {
		}

	}

	@RestController
	static class WindowPlanWithBurst {

		@GetMapping("/window-plan")
		@RateLimited(limit = 1, window = "1s", algorithm = dev.ratelimit.core.Algorithm.FIXED_WINDOW,
				plans = @RateLimited.Plan(name = "pro", limit = 5, burst = 20))
		void get() {
		}

	}

	@RestController
	static class CostAndExpression {

		@GetMapping("/cost-and-expression")
		@RateLimited(limit = 10, window = "1s", cost = 2, costExpression = "#size")
		void get() {
		}

	}

	@RestController
	static class BadCostExpression {

		@GetMapping("/bad-cost")
		@RateLimited(limit = 10, window = "1s", costExpression = "#size +")
		void get() {
		}

	}

	@RestController
	static class Valid {

		@GetMapping("/valid")
		@RateLimited(limit = 1, window = "1s", name = "valid")
		void get() {
		}

	}

	@RestController
	static class Shaped {

		@GetMapping("/shaped")
		@RateLimited(limit = 2, window = "1s", burst = 5, algorithm = dev.ratelimit.core.Algorithm.LEAKY_BUCKET,
				noDelay = true, name = "shaped")
		void get() {
		}

	}

	@RestController
	static class NoDelayOnGcra {

		@GetMapping("/no-delay")
		@RateLimited(limit = 2, window = "1s", burst = 5, algorithm = dev.ratelimit.core.Algorithm.GCRA,
				noDelay = true)
		void get() {
		}

	}

	@RestController
	static class DelayAfterOnTokenBucket {

		@GetMapping("/delay-after")
		@RateLimited(limit = 2, window = "1s", burst = 5, algorithm = dev.ratelimit.core.Algorithm.TOKEN_BUCKET,
				delayAfter = 2)
		void get() {
		}

	}

	@RestController
	static class DelayAfterAndNoDelay {

		@GetMapping("/both")
		@RateLimited(limit = 2, window = "1s", burst = 5, algorithm = dev.ratelimit.core.Algorithm.LEAKY_BUCKET,
				delayAfter = 2, noDelay = true)
		void get() {
		}

	}

	@RestController
	static class DelayAfterBeyondBurst {

		@GetMapping("/beyond")
		@RateLimited(limit = 2, window = "1s", burst = 5, algorithm = dev.ratelimit.core.Algorithm.LEAKY_BUCKET,
				delayAfter = 6)
		void get() {
		}

	}

	@RestController
	static class BadWindow {

		@GetMapping("/bad-window")
		@RateLimited(limit = 1, window = "10x")
		void get() {
		}

	}

	@RestController
	static class ZeroLimit {

		@GetMapping("/zero")
		@RateLimited(limit = 0, window = "10s")
		void get() {
		}

	}

	@RestController
	static class TwoAlgorithms {

		@GetMapping("/two")
		@RateLimited(limit = 1, window = "10s",
				algorithm = { dev.ratelimit.core.Algorithm.GCRA, dev.ratelimit.core.Algorithm.SLIDING_LOG })
		void get() {
		}

	}

	@RestController
	static class DuplicateName {

		@GetMapping("/a")
		@RateLimited(limit = 1, window = "10s", name = "shared")
		void a() {
		}

		@GetMapping("/b")
		@RateLimited(limit = 1, window = "10s", name = "shared")
		void b() {
		}

	}

	@RestController
	static class BadExpression {

		@GetMapping("/spel")
		@RateLimited(limit = 1, window = "10s", key = "spel:#request.(")
		void get() {
		}

	}

	@RestController
	static class UnknownResolver {

		@GetMapping("/resolver")
		@RateLimited(limit = 1, window = "10s", key = "bean:nowhere")
		void get() {
		}

	}

	@RestController
	static class UnknownKey {

		@GetMapping("/unknown-key")
		@RateLimited(limit = 1, window = "10s", key = "session")
		void get() {
		}

	}

	@RestController
	static class BareNumberWindow {

		@GetMapping("/bare")
		@RateLimited(limit = 1, window = "10")
		void get() {
		}

	}

	@RestController
	static class DemoController {

		@GetMapping("/gcra")
		@RateLimited(limit = 1, window = "10s")
		void gcra() {
		}

		@GetMapping("/user")
		@RateLimited(limit = 1, window = "10s", key = "user")
		void user() {
		}

	}

	@RestController
	static class AlikeNames {

		@GetMapping("/a")
		@RateLimited(limit = 1, window = "10s", name = "api-orders")
		void a() {
		}

		@GetMapping("/b")
		@RateLimited(limit = 1, window = "10s", name = "api.orders")
		void b() {
		}

	}

}
