package dev.ratelimit.spring.autoconfigure;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;

import dev.ratelimit.core.ManualTimeSource;
import dev.ratelimit.core.redis.RedisScriptExecutor;
import dev.ratelimit.core.redis.ScriptNotSentException;
import dev.ratelimit.spring.KeyResolver;
import dev.ratelimit.spring.observability.internal.DecisionObserver;
import dev.ratelimit.spring.webmvc.RateLimitWebMvcAutoConfiguration;
import io.micrometer.common.KeyValue;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.observation.ObservationView;
import io.micrometer.observation.tck.TestObservationRegistry;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.http.converter.autoconfigure.HttpMessageConvertersAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.webmvc.autoconfigure.WebMvcAutoConfiguration;
import org.springframework.http.HttpStatus;
import org.springframework.test.web.servlet.assertj.MockMvcTester;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests of the {@code ratelimit.decision} observation around each decision of a request.
 */
class ObservedDecisionsTests {

	private static final String SECRET_KEY = "client-secret-key";

	private final TestObservationRegistry registry = TestObservationRegistry.create();

	private final List<Observation.Context> stopped = new CopyOnWriteArrayList<>();

	private final WebApplicationContextRunner runner = new WebApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class,
				RateLimitWebMvcAutoConfiguration.class, WebMvcAutoConfiguration.class,
				HttpMessageConvertersAutoConfiguration.class, JacksonAutoConfiguration.class))
		.withBean(ManualTimeSource.class, ManualTimeSource::new)
		.withBean("apiKeyResolver", KeyResolver.class, () -> (request) -> request.getHeader("X-Key"))
		.withUserConfiguration(TestControllers.LimitedController.class);

	/** Records every observation that stops. */
	private final ObservationHandler<Observation.Context> recorder = new ObservationHandler<>() {

		@Override
		public void onStop(Observation.Context context) {
			ObservedDecisionsTests.this.stopped.add(context);
		}

		@Override
		public boolean supportsContext(Observation.Context context) {
			return true;
		}

	};

	ObservedDecisionsTests() {
		this.registry.observationConfig().observationHandler(this.recorder);
	}

	@Test
	void observesEachDecisionWithItsPolicyStoreAndOutcomeButNeverTheKey() {
		this.runner.withBean(ObservationRegistry.class, () -> this.registry).run((context) -> {
			MockMvcTester mvc = MockMvcTester.from(context);
			assertThat(mvc.get().uri("/header").header("X-Api-Key", SECRET_KEY)).hasStatusOk();
			assertThat(mvc.get().uri("/header").header("X-Api-Key", SECRET_KEY))
				.hasStatus(HttpStatus.TOO_MANY_REQUESTS);
			assertThat(mvc.get().uri("/stacked")).hasStatusOk();
			assertThat(this.registry).hasNumberOfObservationsWithNameEqualTo("ratelimit.decision", 3)
				.doesNotHaveAnyRemainingCurrentObservation();
			assertThat(this.stopped).extracting(ObservedDecisionsTests::lowCardinality)
				.containsExactly(
						List.of(KeyValue.of("ratelimit.outcome", "allowed"),
								KeyValue.of("ratelimit.policy", "LimitedController.header"),
								KeyValue.of("ratelimit.store", "memory")),
						List.of(KeyValue.of("ratelimit.outcome", "rejected"),
								KeyValue.of("ratelimit.policy", "LimitedController.header"),
								KeyValue.of("ratelimit.store", "memory")),
						List.of(KeyValue.of("ratelimit.outcome", "allowed"),
								KeyValue.of("ratelimit.policy", "per-second,per-minute"),
								KeyValue.of("ratelimit.store", "memory")));
			assertThat(this.stopped).allSatisfy((observed) -> {
				assertThat(observed.getName()).isEqualTo("ratelimit.decision");
				assertThat(observed.getContextualName()).doesNotContain(SECRET_KEY);
				assertThat(observed.getHighCardinalityKeyValues()).isEmpty();
				assertThat(observed.getLowCardinalityKeyValues())
					.allSatisfy((keyValue) -> assertThat(keyValue.getValue()).doesNotContain(SECRET_KEY));
			});
		});
	}

	@Test
	void opensTheScopeAroundTheRedisCallAndTellsWhenTheFailurePolicyDecided() {
		AtomicBoolean reachable = new AtomicBoolean(true);
		List<Object> current = new CopyOnWriteArrayList<>();
		RedisScriptExecutor redis = (sha1, script, keys, args) -> {
			if (keys.get(0).contains("{%fleet}")) {
				return CompletableFuture.completedFuture(List.of(1L, 1_764_000_000L, 0L, 0L, 0L, 0L));
			}
			ObservationView observation = this.registry.getCurrentObservation();
			current.add((observation != null) ? observation.getContextView() : "none");
			return reachable.get()
					? CompletableFuture.completedFuture(List.of(1L, 0L, 0L, 1L, 0L, 0L, 0L, 0L, 0L))
					: CompletableFuture.failedFuture(
							new ScriptNotSentException(ScriptNotSentException.Reason.UNREACHABLE, "refused", null));
		};
		this.runner.withBean(ObservationRegistry.class, () -> this.registry)
			.withBean(RedisScriptExecutor.class, () -> redis)
			.withPropertyValues("ratelimit.store=redis", "ratelimit.redis.failure-policy=deny")
			.run((context) -> {
				MockMvcTester mvc = MockMvcTester.from(context);
				assertThat(mvc.get().uri("/gcra")).hasStatusOk();
				reachable.set(false);
				assertThat(mvc.get().uri("/gcra")).hasStatus(HttpStatus.TOO_MANY_REQUESTS);
				assertThat(this.stopped).extracting(ObservedDecisionsTests::lowCardinality)
					.containsExactly(
							List.of(KeyValue.of("ratelimit.failure_policy", "false"),
									KeyValue.of("ratelimit.outcome", "allowed"),
									KeyValue.of("ratelimit.policy", "LimitedController.gcra"),
									KeyValue.of("ratelimit.store", "redis")),
							List.of(KeyValue.of("ratelimit.failure_policy", "true"),
									KeyValue.of("ratelimit.outcome", "rejected"),
									KeyValue.of("ratelimit.policy", "LimitedController.gcra"),
									KeyValue.of("ratelimit.store", "redis")));
				// the warm-up ran before any request; each decision's call ran in its observation's scope
				assertThat(current).endsWith(this.stopped.get(0), this.stopped.get(1));
			});
	}

	@Test
	void observesNothingWithoutARegistryOrWithoutMicrometerObservation() {
		this.runner.run((context) -> {
			assertThat(context).doesNotHaveBean(DecisionObserver.class);
			assertThat(MockMvcTester.from(context).get().uri("/gcra")).hasStatusOk();
		});
		this.runner.withClassLoader(new FilteredClassLoader(ObservationRegistry.class))
			.run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean(DecisionObserver.class));
		assertThat(this.stopped).isEmpty();
	}

	/** The property that docs/operations.md gives for leaving the decisions unobserved, through Spring Boot's own. */
	@Test
	void observesNoDecisionWhereSpringBootsPropertyTurnsTheObservationOff() {
		WebApplicationContextRunner observed = this.runner
			.withConfiguration(AutoConfigurations.of(ObservationAutoConfiguration.class))
			.withBean(ObservationHandler.class, () -> this.recorder);
		observed.run((context) -> assertThat(MockMvcTester.from(context).get().uri("/gcra")).hasStatusOk());
		assertThat(this.stopped).extracting(Observation.Context::getName).containsExactly("ratelimit.decision");
		this.stopped.clear();
		observed.withPropertyValues("management.observations.enable.ratelimit=false")
			.run((context) -> assertThat(MockMvcTester.from(context).get().uri("/gcra")).hasStatusOk());
		assertThat(this.stopped).isEmpty();
	}

	private static List<KeyValue> lowCardinality(Observation.Context context) {
		return context.getLowCardinalityKeyValues().stream().toList();
	}

}
