package dev.ratelimit.spring.autoconfigure;

import dev.ratelimit.spring.RateLimitConfigurationException;
import dev.ratelimit.spring.redis.JedisScriptExecutor;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import redis.clients.jedis.JedisPoolConfig;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.jedis.JedisClientConfiguration;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;
import org.springframework.mock.env.MockEnvironment;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * How large the Jedis executor's pool is, and when the start warns that requests can find it exhausted.
 */
@ExtendWith(OutputCaptureExtension.class)
class JedisPoolSizeTests {

	private static final ClassLoader CLASS_LOADER = JedisPoolSizeTests.class.getClassLoader();

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class, DataRedisAutoConfiguration.class))
		.withPropertyValues("ratelimit.store=redis", "spring.data.redis.client-type=jedis");

	@Test
	void holdsAConnectionForEveryTomcatRequestThreadByDefault() {
		JedisPoolSize pool = JedisPoolSize.of(new RateLimitProperties.Redis(), new MockEnvironment(),
				jedis(JedisClientConfiguration.defaultConfiguration()), CLASS_LOADER);
		assertThat(pool).isEqualTo(new JedisPoolSize(200, null));
	}

	@Test
	void followsTheTomcatRequestThreadsConfigured() {
		JedisPoolSize pool = JedisPoolSize.of(new RateLimitProperties.Redis(),
				new MockEnvironment().withProperty("server.tomcat.threads.max", "350"),
				jedis(JedisClientConfiguration.defaultConfiguration()), CLASS_LOADER);
		assertThat(pool).isEqualTo(new JedisPoolSize(350, null));
	}

	@Test
	void keepsTheApplicationsJedisPoolSizeWhenLarger() {
		JedisPoolConfig applicationPool = new JedisPoolConfig();
		applicationPool.setMaxTotal(500);
		JedisPoolSize pool = JedisPoolSize.of(new RateLimitProperties.Redis(), new MockEnvironment(),
				jedis(JedisClientConfiguration.builder().usePooling().poolConfig(applicationPool).build()),
				CLASS_LOADER);
		assertThat(pool).isEqualTo(new JedisPoolSize(500, null));
	}

	@Test
	void keepsTheApplicationsJedisPoolSizeWithoutAServletContainer() {
		JedisPoolConfig applicationPool = new JedisPoolConfig();
		applicationPool.setMaxTotal(32);
		JedisPoolSize pool = JedisPoolSize.of(new RateLimitProperties.Redis(), new MockEnvironment(),
				jedis(JedisClientConfiguration.builder().usePooling().poolConfig(applicationPool).build()),
				new FilteredClassLoader("org.apache.catalina", "org.eclipse.jetty"));
		assertThat(pool).isEqualTo(new JedisPoolSize(32, null));
	}

	@Test
	void warnsWhenTheConfiguredPoolIsSmallerThanTheRequestThreads() {
		RateLimitProperties.Redis redis = new RateLimitProperties.Redis();
		redis.setPoolSize(16);
		JedisPoolSize pool = JedisPoolSize.of(redis, new MockEnvironment(),
				jedis(JedisClientConfiguration.defaultConfiguration()), CLASS_LOADER);
		assertThat(pool.size()).isEqualTo(16);
		assertThat(pool.warning()).isEqualTo("The rate limiter's Jedis pool holds 16 connections "
				+ "(ratelimit.redis.pool-size), but Tomcat runs up to 200 requests at once "
				+ "(server.tomcat.threads.max): beyond 16 concurrent decisions, a decision that finds every "
				+ "connection in use waits up to ratelimit.redis.max-wait for one, then the failure policy decides. "
				+ "Set ratelimit.redis.pool-size to 200 or more.");
	}

	@Test
	void warnsAtStartupWhenRequestsCanExhaustThePool(CapturedOutput output) {
		this.runner.withPropertyValues("ratelimit.redis.pool-size=16").run((context) -> {
			assertThat(context).hasNotFailed().hasSingleBean(JedisScriptExecutor.class);
			assertThat(output).containsOnlyOnce("The rate limiter's Jedis pool holds 16 connections "
					+ "(ratelimit.redis.pool-size), but Tomcat runs up to 200 requests at once "
					+ "(server.tomcat.threads.max)");
			assertThat(output.getAll().lines().filter((line) -> line.contains("Jedis pool holds")))
				.allSatisfy((line) -> assertThat(line).contains("WARN"));
		});
	}

	@Test
	void startsWithoutWarningWhenThePoolHoldsEveryRequestThread(CapturedOutput output) {
		this.runner.withPropertyValues("server.tomcat.threads.max=50", "ratelimit.redis.pool-size=50")
			.run((context) -> {
				assertThat(context).hasNotFailed().hasSingleBean(JedisScriptExecutor.class);
				assertThat(output).doesNotContain("ratelimit.redis.pool-size");
			});
	}

	@Test
	void warnsWhenRequestsRunOnVirtualThreads() {
		JedisPoolSize pool = JedisPoolSize.of(new RateLimitProperties.Redis(),
				new MockEnvironment().withProperty("spring.threads.virtual.enabled", "true"),
				jedis(JedisClientConfiguration.defaultConfiguration()), CLASS_LOADER);
		assertThat(pool.size()).isEqualTo(200);
		if (Runtime.version().feature() >= 21) {
			assertThat(pool.warning()).startsWith("Requests run on virtual threads (spring.threads.virtual.enabled), "
					+ "any number of them at once, but the rate limiter's Jedis pool holds 200 connections "
					+ "(ratelimit.redis.pool-size)");
		}
		else {
			// before Java 21 Spring Boot ignores the property: requests run on the container's 200 threads
			assertThat(pool.warning()).isNull();
		}
	}

	@Test
	void failsClearlyOnAPoolSizeThatIsNotPositive() {
		this.runner.withPropertyValues("ratelimit.redis.pool-size=0")
			.run((context) -> assertThat(context).getFailure()
				.rootCause()
				.isInstanceOf(RateLimitConfigurationException.class)
				.hasMessage("Invalid ratelimit.redis.pool-size: poolSize must be positive, was 0"));
	}

	private static JedisConnectionFactory jedis(JedisClientConfiguration client) {
		return new JedisConnectionFactory(new RedisStandaloneConfiguration(), client);
	}

}
