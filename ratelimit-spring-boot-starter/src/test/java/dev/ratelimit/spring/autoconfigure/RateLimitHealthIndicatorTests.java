package dev.ratelimit.spring.autoconfigure;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.RateLimiter;
import dev.ratelimit.core.redis.RedisRateLimitStore;
import dev.ratelimit.core.redis.RedisScriptExecutor;
import dev.ratelimit.core.redis.ScriptNotSentException;
import dev.ratelimit.spring.actuate.RateLimitHealthIndicator;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests of the {@code ratelimit} health contributor in each state of each store.
 */
class RateLimitHealthIndicatorTests {

	private static final RateLimitPolicy POLICY = RateLimitPolicy.of("api", Algorithm.GCRA, 1, Duration.ofSeconds(1));

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class));

	private final AtomicBoolean reachable = new AtomicBoolean(true);

	/** Answers every call when reachable, else cannot connect: the store switches to its failure policy at once. */
	private final RedisScriptExecutor redis = (sha1, script, keys, args) -> this.reachable.get()
			? CompletableFuture.completedFuture(keys.get(0).contains("{%fleet}")
					? List.of(2L, 1_764_000_000L, 0L, 0L, 0L, 0L) : List.of(1L, 0L, 0L, 1L, 0L, 0L, 0L, 0L, 0L))
			: CompletableFuture.failedFuture(
					new ScriptNotSentException(ScriptNotSentException.Reason.UNREACHABLE, "refused", null));

	@Test
	void reportsTheInMemoryStoreUp() {
		this.runner.run((context) -> {
			Health health = health(context.getBean("ratelimitHealthContributor", HealthIndicator.class));
			assertThat(health.getStatus()).isEqualTo(Status.UP);
			assertThat(health.getDetails()).containsExactly(entry("store", "memory"));
		});
	}

	@Test
	void reportsRedisAnsweringWithTheFailurePolicyAndItsDecisions() {
		this.runner.withBean(RedisScriptExecutor.class, () -> this.redis)
			.withPropertyValues("ratelimit.store=redis", "ratelimit.redis.failure-policy=deny")
			.run((context) -> {
				RedisRateLimitStore store = context.getBean(RedisRateLimitStore.class);
				store.warmUp().orElseThrow().warmUp(List.of()).toCompletableFuture().join();
				store.limiter(POLICY).decide("client");
				Health health = health(context.getBean("ratelimitHealthContributor", HealthIndicator.class));
				assertThat(health.getStatus()).isEqualTo(Status.UP);
				assertThat(health.getDetails()).containsOnly(entry("store", "redis"), entry("redis", "answering"),
						entry("failurePolicy", "deny"), entry("failurePolicyDecisions", 0L),
						entry("fleetInstances", 2));
			});
	}

	@Test
	void staysUpWhileRedisFailsAndTheFailurePolicyDecides() {
		this.runner.withBean(RedisScriptExecutor.class, () -> this.redis)
			.withPropertyValues("ratelimit.store=redis")
			.run((context) -> {
				RateLimiter limiter = context.getBean(RedisRateLimitStore.class).limiter(POLICY);
				limiter.decide("client");
				this.reachable.set(false);
				Instant before = Instant.now().minusMillis(1);
				limiter.decide("client");
				limiter.decide("client");
				Instant after = Instant.now().plusMillis(1);
				Health health = health(context.getBean("ratelimitHealthContributor", HealthIndicator.class));
				assertThat(health.getStatus()).isEqualTo(Status.UP);
				assertThat(health.getDetails()).contains(entry("store", "redis"), entry("redis", "failing"),
						entry("failurePolicy", "local"), entry("failurePolicyDecisions", 2L),
						entry("failurePolicyDecisionsDuringOutage", 2L));
				assertThat(Instant.parse((String) health.getDetails().get("failingSince"))).isBetween(before, after);
				this.reachable.set(true);
				limiter.decide("other");
				health = health(context.getBean("ratelimitHealthContributor", HealthIndicator.class));
				assertThat(health.getDetails()).contains(entry("redis", "answering"),
						entry("failurePolicyDecisions", 2L))
					.doesNotContainKeys("failingSince", "failurePolicyDecisionsDuringOutage");
			});
	}

	@Test
	void goesDownWhileRedisFailsWhenToldTo() {
		this.runner.withBean(RedisScriptExecutor.class, () -> this.redis)
			.withPropertyValues("ratelimit.store=redis", "ratelimit.health.down-when-failing=true")
			.run((context) -> {
				HealthIndicator indicator = context.getBean("ratelimitHealthContributor", HealthIndicator.class);
				RateLimiter limiter = context.getBean(RedisRateLimitStore.class).limiter(POLICY);
				limiter.decide("client");
				assertThat(health(indicator).getStatus()).isEqualTo(Status.UP);
				this.reachable.set(false);
				limiter.decide("client");
				assertThat(health(indicator).getStatus()).isEqualTo(Status.DOWN);
				assertThat(health(indicator).getDetails()).contains(entry("redis", "failing"));
				this.reachable.set(true);
				limiter.decide("client");
				assertThat(health(indicator).getStatus()).isEqualTo(Status.UP);
			});
	}

	@Test
	void contributesNothingWhenDisabledOrWithoutTheHealthModule() {
		this.runner.withPropertyValues("management.health.ratelimit.enabled=false")
			.run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean(RateLimitHealthIndicator.class));
		this.runner.withClassLoader(new FilteredClassLoader(HealthIndicator.class))
			.run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean(RateLimitHealthIndicator.class));
	}

	private static Health health(HealthIndicator indicator) {
		return indicator.health(true);
	}

	private static Map.Entry<String, Object> entry(String key, Object value) {
		return Map.entry(key, value);
	}

}
