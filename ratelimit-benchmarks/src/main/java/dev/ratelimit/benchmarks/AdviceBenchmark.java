package dev.ratelimit.benchmarks;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.RateLimiter;
import dev.ratelimit.core.memory.InMemoryRateLimitStore;
import dev.ratelimit.spring.RateLimited;
import dev.ratelimit.spring.autoconfigure.RateLimitAutoConfiguration;
import io.github.resilience4j.ratelimiter.RateLimiterConfig;
import io.github.resilience4j.ratelimiter.RateLimiterRegistry;
import io.github.resilience4j.spring6.ratelimiter.configure.RateLimiterConfiguration;
import io.github.resilience4j.spring6.ratelimiter.configure.RateLimiterConfigurationProperties;
import org.jspecify.annotations.Nullable;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;

import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.EnableAspectJAutoProxy;
import org.springframework.context.annotation.Import;
import org.springframework.core.env.Environment;

/**
 * Calls per microsecond of a bean method limited by an annotation, against the same method called bare after a
 * limiter's decision: {@code @RateLimited} keyed by an argument and by one global key, beside Resilience4j's
 * {@code @RateLimiter} aspect and its decorated call. Every call is allowed: the limits are far above the rate.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@State(Scope.Benchmark)
public class AdviceBenchmark {

	/** Far above any rate a benchmark reaches, so that every call is allowed. */
	private static final long LIMIT = 1_000_000_000L;

	@Param({ "bare", "ratelimit-argument", "ratelimit-global", "resilience4j-bare", "resilience4j" })
	public String contender;

	/** The limit of every contender: far above the rate, or lower in a test that checks each limits. */
	long limit = LIMIT;

	private @Nullable ConfigurableApplicationContext context;

	private Function<String, String> call = Quotes::answer;

	@Setup
	public void setUp() {
		switch (this.contender) {
			case "bare" -> {
				RateLimiter limiter = InMemoryRateLimitStore.builder()
					.build()
					.limiter(RateLimitPolicy.of("bare", Algorithm.GCRA, this.limit, Duration.ofSeconds(1)));
				this.call = (customer) -> limiter.tryAcquire(customer) ? Quotes.answer(customer) : "denied";
			}
			case "ratelimit-argument" -> this.call = bean(LimitedQuotes.class,
					Map.of("ratelimit.policies.argument.limit", this.limit))::quote;
			case "ratelimit-global" -> this.call = bean(LimitedQuotes.class,
					Map.of("ratelimit.policies.global.limit", this.limit))::globalQuote;
			case "resilience4j-bare" -> {
				io.github.resilience4j.ratelimiter.RateLimiter limiter = resilience4j(this.limit).rateLimiter("quotes");
				this.call = (customer) -> limiter.executeSupplier(() -> Quotes.answer(customer));
			}
			// the registry of our own replaces the aspect configuration's, as a Spring Boot application's properties would
			case "resilience4j" -> this.call = bean(Resilience4jQuotes.class,
					Map.of("spring.main.allow-bean-definition-overriding", "true", "benchmark.limit", this.limit))::quote;
			default -> throw new IllegalArgumentException("Unknown contender " + this.contender);
		}
	}

	private <T> T bean(Class<T> type, Map<String, Object> properties) {
		Class<?> configuration = (type == LimitedQuotes.class) ? RateLimitedApplication.class
				: Resilience4jApplication.class;
		this.context = new SpringApplicationBuilder(configuration).web(WebApplicationType.NONE)
			.properties(properties)
			.logStartupInfo(false)
			.run();
		return this.context.getBean(type);
	}

	@TearDown
	public void tearDown() {
		if (this.context != null) {
			this.context.close();
		}
	}

	@Benchmark
	@Threads(1)
	public String oneThread() {
		return this.call.apply("customer-42");
	}

	private static RateLimiterRegistry resilience4j(long limit) {
		return RateLimiterRegistry.of(RateLimiterConfig.custom()
			.limitForPeriod((int) Math.min(limit, Integer.MAX_VALUE))
			.limitRefreshPeriod(Duration.ofSeconds(1))
			.timeoutDuration(Duration.ZERO)
			.build());
	}

	/** What every contender's method does once allowed. */
	static final class Quotes {

		private Quotes() {
		}

		static String answer(String customer) {
			return customer;
		}

	}

	/** A bean limited by {@code @RateLimited}. */
	public static class LimitedQuotes {

		@RateLimited(name = "argument", limit = LIMIT, window = "1s", key = "#customer")
		public String quote(String customer) {
			return Quotes.answer(customer);
		}

		@RateLimited(name = "global", limit = LIMIT, window = "1s", key = "global")
		public String globalQuote(String customer) {
			return Quotes.answer(customer);
		}

	}

	/** A bean limited by Resilience4j's {@code @RateLimiter}. */
	public static class Resilience4jQuotes {

		@io.github.resilience4j.ratelimiter.annotation.RateLimiter(name = "quotes")
		public String quote(String customer) {
			return Quotes.answer(customer);
		}

	}

	/** The starter's auto-configuration, in memory, and the limited bean. */
	@Configuration(proxyBeanMethods = false)
	@ImportAutoConfiguration(RateLimitAutoConfiguration.class)
	static class RateLimitedApplication {

		@Bean
		LimitedQuotes limitedQuotes() {
			return new LimitedQuotes();
		}

	}

	/** Resilience4j's aspect, on AspectJ's auto-proxying, and the limited bean. */
	@Configuration(proxyBeanMethods = false)
	@EnableAspectJAutoProxy(proxyTargetClass = true)
	@Import(RateLimiterConfiguration.class)
	static class Resilience4jApplication {

		@Bean
		RateLimiterConfigurationProperties rateLimiterConfigurationProperties() {
			return new RateLimiterConfigurationProperties();
		}

		@Bean
		RateLimiterRegistry rateLimiterRegistry(Environment environment) {
			return resilience4j(environment.getRequiredProperty("benchmark.limit", Long.class));
		}

		@Bean
		Resilience4jQuotes resilience4jQuotes() {
			return new Resilience4jQuotes();
		}

	}

}
