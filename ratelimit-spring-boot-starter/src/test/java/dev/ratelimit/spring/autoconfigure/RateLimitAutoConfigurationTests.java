package dev.ratelimit.spring.autoconfigure;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.ManualTimeSource;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.RateLimitStore;
import dev.ratelimit.core.RateLimiter;
import dev.ratelimit.core.TimeSource;
import dev.ratelimit.core.memory.InMemoryRateLimitStore;
import dev.ratelimit.core.redis.RedisRateLimitStore;
import dev.ratelimit.core.redis.RedisScriptExecutor;
import dev.ratelimit.core.redis.ScriptNotSentException;
import dev.ratelimit.spring.RateLimitConfigurationException;
import dev.ratelimit.spring.RateLimitExceededHandler;
import dev.ratelimit.spring.redis.JedisScriptExecutor;
import dev.ratelimit.spring.redis.SpringDataRedisScriptExecutor;
import dev.ratelimit.spring.webmvc.RateLimitWebMvcAutoConfiguration;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.task.TaskSchedulingAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.webmvc.autoconfigure.WebMvcAutoConfiguration;
import org.springframework.context.annotation.Configuration;
import org.springframework.scheduling.annotation.EnableScheduling;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests of the conditions of the auto-configurations.
 */
class RateLimitAutoConfigurationTests {

	private final WebApplicationContextRunner runner = new WebApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class,
				RateLimitWebMvcAutoConfiguration.class, WebMvcAutoConfiguration.class));

	@Test
	void configuresAShapingSchedulerThatNeverStandsInForTheApplicationsOwn() {
		ScheduledExecutorService own = Executors.newSingleThreadScheduledExecutor();
		try {
			this.runner.withBean("ownScheduler", ScheduledExecutorService.class, () -> own).run((context) -> {
				assertThat(context.getBean(RateLimitAutoConfiguration.SHAPING_SCHEDULER_BEAN_NAME))
					.isInstanceOf(ScheduledThreadPoolExecutor.class);
				assertThat(context.getBean(ScheduledExecutorService.class)).isSameAs(own);
			});
		}
		finally {
			own.shutdownNow();
		}
	}

	@Test
	void leavesTheApplicationsScheduledTasksToSpringBootsScheduler() {
		this.runner.withConfiguration(AutoConfigurations.of(TaskSchedulingAutoConfiguration.class))
			.withUserConfiguration(SchedulingEnabled.class)
			.run((context) -> assertThat(context).hasBean("taskScheduler")
				.hasBean(RateLimitAutoConfiguration.SHAPING_SCHEDULER_BEAN_NAME));
	}

	@Test
	void usesTheApplicationsShapingScheduler() {
		ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
		try {
			this.runner
				.withBean(RateLimitAutoConfiguration.SHAPING_SCHEDULER_BEAN_NAME, ScheduledExecutorService.class,
						() -> scheduler)
				.run((context) -> assertThat(context).hasNotFailed()
					.getBean(RateLimitAutoConfiguration.SHAPING_SCHEDULER_BEAN_NAME)
					.isSameAs(scheduler));
		}
		finally {
			scheduler.shutdownNow();
		}
	}

	@Test
	void shutsTheShapingSchedulerDownWithTheContext() {
		AtomicReference<ScheduledThreadPoolExecutor> scheduler = new AtomicReference<>();
		this.runner.run((context) -> scheduler.set(context
			.getBean(RateLimitAutoConfiguration.SHAPING_SCHEDULER_BEAN_NAME, ScheduledThreadPoolExecutor.class)));
		assertThat(scheduler.get().isShutdown()).isTrue();
	}

	@Test
	void usesTheApplicationsStore() {
		RateLimitStore store = InMemoryRateLimitStore.builder().build();
		this.runner.withBean(RateLimitStore.class, () -> store)
			.run((context) -> assertThat(context).getBean(RateLimitStore.class).isSameAs(store));
	}

	@Test
	void usesTheApplicationsTimeSourceAndHandler() {
		ManualTimeSource time = new ManualTimeSource();
		RateLimitExceededHandler handler = (request, rejection) -> rejection.toProblemDetail();
		this.runner.withBean(ManualTimeSource.class, () -> time)
			.withBean(RateLimitExceededHandler.class, () -> handler)
			.run((context) -> {
				assertThat(context).getBean(TimeSource.class).isSameAs(time);
				assertThat(context).getBean(RateLimitExceededHandler.class).isSameAs(handler);
			});
	}

	@Test
	void appliesMaxKeysToTheInMemoryStore() {
		this.runner.withBean(ManualTimeSource.class, ManualTimeSource::new)
			.withPropertyValues("ratelimit.max-keys=2")
			.run((context) -> {
				InMemoryRateLimitStore store = context.getBean(InMemoryRateLimitStore.class);
				RateLimiter limiter = store.limiter(RateLimitPolicy.of("p", dev.ratelimit.core.Algorithm.GCRA, 1,
						java.time.Duration.ofSeconds(10)));
				limiter.decide("a");
				limiter.decide("b");
				limiter.decide("c");
				assertThat(store.size()).isEqualTo(2);
			});
	}

	@Test
	void publishesWhetherRedisIsFailingAndTheFleetSizeAsGauges() {
		AtomicBoolean reachable = new AtomicBoolean();
		this.runner.withBean(RedisScriptExecutor.class, () -> (sha1, script, keys, args) -> reachable.get()
				? CompletableFuture.completedFuture(keys.get(0).contains("{%fleet}")
						? List.of(3L, 1_764_000_000L, 0L, 0L, 0L, 0L) : List.of(1L, 0L, 0L, 1L, 0L, 0L, 0L, 0L, 0L))
				: CompletableFuture.failedFuture(
						new ScriptNotSentException(ScriptNotSentException.Reason.UNREACHABLE, "refused", null)))
			.withPropertyValues("ratelimit.store=redis", "ratelimit.redis.failure-policy=allow")
			.run((context) -> {
				MeterRegistry registry = new SimpleMeterRegistry();
				context.getBeansOfType(MeterBinder.class).values().forEach((binder) -> binder.bindTo(registry));
				RateLimiter limiter = context.getBean(RedisRateLimitStore.class)
					.limiter(RateLimitPolicy.of("api", Algorithm.GCRA, 1, Duration.ofSeconds(1)));
				limiter.decide("client");
				assertThat(registry.get("ratelimit.store.failing").gauge().value()).isOne();
				assertThat(registry.get("ratelimit.fleet.instances").gauge().value()).isOne();
				reachable.set(true);
				limiter.decide("client");
				assertThat(registry.get("ratelimit.store.failing").gauge().value()).isZero();
				// the heartbeat the warm-up sent could not count the fleet; one that answers does
				context.getBean(RedisRateLimitStore.class)
					.warmUp()
					.orElseThrow()
					.warmUp(List.of())
					.toCompletableFuture()
					.join();
				assertThat(registry.get("ratelimit.fleet.instances").gauge().value()).isEqualTo(3.0);
			});
	}

	@ParameterizedTest
	@ValueSource(booleans = { true, false })
	void deniesAgainWithoutACallWhileRedisDeniesUnlessToldNotTo(boolean localDenials) {
		AtomicInteger decisionCalls = new AtomicInteger();
		this.runner.withBean(RedisScriptExecutor.class, () -> (sha1, script, keys, args) -> {
			if (keys.size() == 1 && keys.get(0).endsWith("fleet")) {
				return CompletableFuture.completedFuture(List.of(1L, 1_764_000_000L, 0L, 0L, 0L, 0L));
			}
			decisionCalls.incrementAndGet();
			// denied, nothing left, for a minute
			return CompletableFuture.completedFuture(List.of(0L, 0L, 60_000_000L, 60_000_000L, 0L, 0L, 0L, 0L, 0L));
		})
			.withPropertyValues("ratelimit.store=redis", "ratelimit.redis.local-denials=" + localDenials)
			.run((context) -> {
				RateLimiter limiter = context.getBean(RedisRateLimitStore.class)
					.limiter(RateLimitPolicy.of("api", Algorithm.GCRA, 1, Duration.ofMinutes(1)));
				int before = decisionCalls.get();
				for (int i = 0; i < 5; i++) {
					assertThat(limiter.decide("client").allowed()).isFalse();
				}
				assertThat(decisionCalls.get() - before).isEqualTo(localDenials ? 1 : 5);
			});
	}

	@Test
	void worksWithoutRedisOnTheClasspath() {
		this.runner.withClassLoader(new FilteredClassLoader("org.springframework.data.redis"))
			.run((context) -> assertThat(context).hasNotFailed().hasSingleBean(InMemoryRateLimitStore.class));
	}

	@Test
	void configuresRedisStoreOnTheApplicationsRedisConnection() {
		List<RedisRateLimitStore.Builder> customized = new ArrayList<>();
		this.runner.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class))
			.withBean(RedisRateLimitStoreBuilderCustomizer.class, () -> customized::add)
			.withPropertyValues("ratelimit.store=redis", "ratelimit.redis.failure-policy=deny")
			.run((context) -> {
				assertThat(context).hasSingleBean(RedisRateLimitStore.class).hasSingleBean(RateLimitStore.class);
				assertThat(context).getBean(RedisScriptExecutor.class).isInstanceOf(SpringDataRedisScriptExecutor.class);
				assertThat(customized).hasSize(1);
			});
	}

	@Test
	void decidesOnTheRequestThreadWhenTheApplicationUsesJedis() {
		this.runner.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class))
			.withPropertyValues("ratelimit.store=redis", "spring.data.redis.client-type=jedis")
			.run((context) -> {
				assertThat(context).hasSingleBean(RedisRateLimitStore.class);
				assertThat(context).getBean(RedisScriptExecutor.class).isInstanceOf(JedisScriptExecutor.class);
			});
	}

	@Test
	void failsClearlyOnAnInvalidRedisTimeoutWithJedis() {
		this.runner.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class))
			.withPropertyValues("ratelimit.store=redis", "spring.data.redis.client-type=jedis",
					"ratelimit.redis.timeout=0s")
			.run((context) -> assertThat(context).getFailure()
				.rootCause()
				.isInstanceOf(RateLimitConfigurationException.class)
				.hasMessage("Invalid ratelimit.redis.timeout: timeout must be positive, was PT0S"));
	}

	@Test
	void failsClearlyOnAMaximumWaitShorterThanTheTimeout() {
		this.runner.withBean(RedisScriptExecutor.class, () -> (sha1, script, keys, args) -> {
			throw new UnsupportedOperationException();
		})
			.withPropertyValues("ratelimit.store=redis", "ratelimit.redis.timeout=200ms",
					"ratelimit.redis.max-wait=100ms")
			.run((context) -> assertThat(context).getFailure()
				.rootCause()
				.isInstanceOf(RateLimitConfigurationException.class)
				.hasMessage("Invalid ratelimit.redis.max-wait: maxWait must be no shorter than the timeout (PT0.2S), "
						+ "was PT0.1S"));
	}

	@Test
	void usesTheApplicationsRedisScriptExecutor() {
		this.runner.withBean(RedisScriptExecutor.class, () -> (sha1, script, keys, args) -> {
			throw new UnsupportedOperationException();
		})
			.withPropertyValues("ratelimit.store=redis")
			.run((context) -> assertThat(context).hasNotFailed()
				.hasSingleBean(RedisRateLimitStore.class)
				.hasSingleBean(RedisScriptExecutor.class));
	}

	@Test
	void failsClearlyWhenRedisStoreIsAskedWithoutARedisConnection() {
		this.runner.withPropertyValues("ratelimit.store=redis")
			.run((context) -> assertThat(context).getFailure()
				.rootCause()
				.isInstanceOf(RateLimitConfigurationException.class)
				.hasMessage("ratelimit.store is redis, but there is no Redis connection: neither a "
						+ "JedisConnectionFactory nor a ReactiveRedisConnectionFactory bean is defined."));
	}

	@Test
	void failsClearlyOnAnInvalidRedisKeyPrefix() {
		this.runner.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class))
			.withPropertyValues("ratelimit.store=redis", "ratelimit.redis.key-prefix={app}:")
			.run((context) -> assertThat(context).getFailure()
				.rootCause()
				.hasMessageStartingWith("Invalid ratelimit.redis.key-prefix: keyPrefix '{app}:' must not contain braces"));
	}

	@Test
	void failsClearlyWhenRedisStoreIsAskedWithoutSpringDataRedis() {
		this.runner.withClassLoader(new FilteredClassLoader("org.springframework.data.redis"))
			.withPropertyValues("ratelimit.store=redis")
			.run((context) -> assertThat(context).getFailure()
				.rootCause()
				.isInstanceOf(RateLimitConfigurationException.class)
				.hasMessage("ratelimit.store is redis, but Spring Data Redis is not on the classpath."));
	}

	@Configuration(proxyBeanMethods = false)
	@EnableScheduling
	static class SchedulingEnabled {

	}

}
