package dev.ratelimit.spring.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

import io.lettuce.core.RedisURI;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.data.redis.connection.RedisClusterConfiguration;
import org.springframework.data.redis.connection.RedisConfiguration;
import org.springframework.data.redis.connection.RedisSentinelConfiguration;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.Decision;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.RateLimiter;
import dev.ratelimit.core.redis.FailurePolicy;
import dev.ratelimit.core.redis.RedisRateLimitStore;
import dev.ratelimit.core.redis.RedisScriptExecutor;
import dev.ratelimit.core.testing.LocalRedisCluster;
import dev.ratelimit.core.testing.LocalRedisSentinel;
import dev.ratelimit.core.testing.RedisExtension;
import dev.ratelimit.core.testing.RedisServerProcess;
import dev.ratelimit.core.testing.TestRedis;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What every executor of the starter must do, whatever its client: return the script's integers, load the
 * scripts again after a {@code SCRIPT FLUSH}, and decide on the primary a real Sentinel names and on every node
 * of a real Redis Cluster.
 */
@ExtendWith(RedisExtension.class)
abstract class AbstractScriptExecutorIT {

	static final RateLimitPolicy POLICY = RateLimitPolicy.of("api", Algorithm.GCRA, 3, Duration.ofMinutes(1));

	private static final String RUN = Long.toString(ThreadLocalRandom.current().nextLong() >>> 1, 36);

	final List<Throwable> failures = new ArrayList<>();

	/**
	 * Opens the executor under test on the given connection settings.
	 */
	abstract Connection connect(RedisConfiguration configuration);

	/** An executor and how to close what it runs on. */
	record Connection(RedisScriptExecutor executor, Runnable closer) implements AutoCloseable {

		@Override
		public void close() {
			this.closer.run();
		}

	}

	/** Builds a client's connection factory for whichever of the three kinds of configuration it is given. */
	static <F> F connectionFactory(RedisConfiguration configuration,
			Function<RedisStandaloneConfiguration, F> standalone, Function<RedisSentinelConfiguration, F> sentinel,
			Function<RedisClusterConfiguration, F> cluster) {
		if (configuration instanceof RedisSentinelConfiguration sentinelConfiguration) {
			return sentinel.apply(sentinelConfiguration);
		}
		if (configuration instanceof RedisClusterConfiguration clusterConfiguration) {
			return cluster.apply(clusterConfiguration);
		}
		return standalone.apply((RedisStandaloneConfiguration) configuration);
	}

	static RedisStandaloneConfiguration standalone(TestRedis redis) {
		RedisURI uri = RedisURI.create(redis.uri());
		RedisStandaloneConfiguration configuration = new RedisStandaloneConfiguration(uri.getHost(), uri.getPort());
		if (uri.getPassword() != null) {
			configuration.setPassword(uri.getPassword());
		}
		return configuration;
	}

	@Test
	void returnsTheScriptsIntegers(TestRedis redis) throws Exception {
		try (Connection connection = connect(standalone(redis))) {
			List<Long> reply = connection.executor()
				.execute("0000000000000000000000000000000000000000", "return {1, 0, -2, 9007199254740992}",
						List.of("k"), List.of())
				.toCompletableFuture()
				.get(10, TimeUnit.SECONDS);
			assertThat(reply).containsExactly(1L, 0L, -2L, 9007199254740992L);
		}
	}

	@Test
	void reloadsTheScriptsAfterAScriptFlush(TestRedis redis) {
		try (Connection connection = connect(standalone(redis))) {
			RateLimiter limiter = store(connection.executor(), "flush").limiter(POLICY);
			List<Boolean> allowed = new ArrayList<>();
			for (int i = 0; i < 4; i++) {
				redis.commands().scriptFlush();
				allowed.add(limiter.tryAcquire("client"));
			}
			assertThat(allowed).containsExactly(true, true, true, false);
			assertThat(this.failures).isEmpty();
		}
	}

	@Test
	void decidesOnThePrimaryASentinelNames() {
		if (!RedisServerProcess.isAvailable()) {
			TestRedis.skipOrFail("there is no redis-server on the PATH to start a Sentinel");
		}
		try (LocalRedisSentinel sentinel = LocalRedisSentinel.start();
				Connection connection = connect(new RedisSentinelConfiguration(LocalRedisSentinel.PRIMARY_NAME,
						Set.of("127.0.0.1:" + sentinel.sentinelPort())))) {
			RateLimiter limiter = store(connection.executor(), "sentinel").limiter(POLICY);
			List<Boolean> allowed = new ArrayList<>();
			for (int i = 0; i < 4; i++) {
				allowed.add(limiter.tryAcquire("client"));
			}
			assertThat(allowed).containsExactly(true, true, true, false);
			assertThat(this.failures).isEmpty();
			assertThat(sentinel.primary().command("DBSIZE")).isEqualTo(":1");
		}
	}

	@Test
	void decidesStackedPoliciesOnACluster() {
		if (!LocalRedisCluster.isAvailable()) {
			TestRedis.skipOrFail("there is no redis-server and redis-cli on the PATH to start a cluster");
		}
		try (LocalRedisCluster cluster = LocalRedisCluster.start();
				Connection connection = connect(new RedisClusterConfiguration(
						cluster.nodes().stream().map((node) -> "127.0.0.1:" + node.port()).toList()))) {
			RedisRateLimitStore store = store(connection.executor(), "cluster");
			List<RateLimitPolicy> stack = List.of(
					RateLimitPolicy.of("second", Algorithm.TOKEN_BUCKET, 2, Duration.ofMinutes(1)),
					RateLimitPolicy.of("minute", Algorithm.SLIDING_LOG, 5, Duration.ofMinutes(1)));
			for (int client = 0; client < 100; client++) {
				List<Boolean> allowed = new ArrayList<>();
				for (int i = 0; i < 3; i++) {
					List<Decision> decisions = store.decideAll("client-" + client, stack);
					allowed.add(decisions.get(0).allowed());
				}
				assertThat(allowed).as("client %d", client).containsExactly(true, true, false);
			}
			assertThat(this.failures).isEmpty();
			for (RedisServerProcess node : cluster.nodes()) {
				assertThat(node.command("DBSIZE")).as("keys on port %d", node.port()).isNotEqualTo(":0");
			}
		}
	}

	/** A store that denies whenever Redis does not decide, and records why. */
	RedisRateLimitStore store(RedisScriptExecutor executor, String name) {
		return RedisRateLimitStore.builder(executor)
			.keyPrefix(getClass().getSimpleName() + ":" + name + ":" + RUN + ":")
			.timeout(Duration.ofSeconds(10))
			.failurePolicy(FailurePolicy.DENY)
			.onFailure((policies, cause) -> this.failures.add(cause))
			.build();
	}

}
