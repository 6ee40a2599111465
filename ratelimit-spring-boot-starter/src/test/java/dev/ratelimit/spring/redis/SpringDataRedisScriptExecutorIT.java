package dev.ratelimit.spring.redis;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.assertj.core.api.InstanceOfAssertFactories;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.data.redis.connection.RedisClusterConfiguration;
import org.springframework.data.redis.connection.RedisSentinelConfiguration;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.Decision;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.RateLimiter;
import dev.ratelimit.core.redis.FailurePolicy;
import dev.ratelimit.core.redis.RedisRateLimitStore;
import dev.ratelimit.core.testing.LocalRedisCluster;
import dev.ratelimit.core.testing.LocalRedisSentinel;
import dev.ratelimit.core.testing.RedisExtension;
import dev.ratelimit.core.testing.RedisServerProcess;
import dev.ratelimit.core.testing.TestRedis;

import static org.assertj.core.api.Assertions.as;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Spring Data Redis executor on a standalone Redis that forgets its scripts, and on a real Sentinel and a
 * real Redis Cluster.
 */
@ExtendWith(RedisExtension.class)
class SpringDataRedisScriptExecutorIT {

	private static final String RUN = Long.toString(ThreadLocalRandom.current().nextLong() >>> 1, 36);

	private final List<Throwable> failures = new ArrayList<>();

	@Test
	void returnsTheScriptsIntegers(TestRedis redis) throws Exception {
		LettuceConnectionFactory connectionFactory = SpringDataRedisStoreContractIT.connectionFactory(redis);
		try {
			List<Long> reply = new SpringDataRedisScriptExecutor(connectionFactory)
				.execute("0000000000000000000000000000000000000000", "return {1, 0, -2, 9007199254740992}",
						List.of("k"), List.of())
				.toCompletableFuture()
				.get(10, TimeUnit.SECONDS);
			assertThat(reply).containsExactly(1L, 0L, -2L, 9007199254740992L);
		}
		finally {
			connectionFactory.destroy();
		}
	}

	@Test
	void keepsNoCallerWaitingLongerThanTheTimeoutForAConnectionThatDoesNotOpen() throws Exception {
		// a server that accepts connections, through its backlog, but never answers Lettuce's handshake
		try (ServerSocket silent = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
			LettuceConnectionFactory connectionFactory = new LettuceConnectionFactory(
					new RedisStandaloneConfiguration("127.0.0.1", silent.getLocalPort()),
					LettuceClientConfiguration.builder().commandTimeout(Duration.ofMinutes(1)).build());
			connectionFactory.afterPropertiesSet();
			try {
				RateLimitPolicy policy = RateLimitPolicy.of("api", Algorithm.GCRA, 3, Duration.ofMinutes(1));
				RedisRateLimitStore store = RedisRateLimitStore
					.builder(new SpringDataRedisScriptExecutor(connectionFactory))
					.failurePolicy(FailurePolicy.DENY)
					.onFailure((policies, cause) -> this.failures.add(cause))
					.build();
				CompletableFuture<Void> warmUp = store.warmUp(List.of(List.of(policy)));
				assertThat(store.limiter(policy).decide("client").allowed()).isFalse();
				assertThat(this.failures).singleElement(as(InstanceOfAssertFactories.THROWABLE))
					.isInstanceOf(TimeoutException.class)
					.hasMessage("Redis did not answer within 100 ms");
				assertThat(warmUp).isNotDone();
			}
			finally {
				// resets the connection still waiting for its handshake, which would hold up the shutdown
				silent.close();
				connectionFactory.destroy();
			}
		}
	}

	@Test
	void reloadsTheScriptsAfterAScriptFlush(TestRedis redis) {
		LettuceConnectionFactory connectionFactory = SpringDataRedisStoreContractIT.connectionFactory(redis);
		try {
			RateLimiter limiter = store(new SpringDataRedisScriptExecutor(connectionFactory), "flush")
				.limiter(RateLimitPolicy.of("api", Algorithm.GCRA, 3, Duration.ofMinutes(1)));
			List<Boolean> allowed = new ArrayList<>();
			for (int i = 0; i < 4; i++) {
				redis.commands().scriptFlush();
				allowed.add(limiter.tryAcquire("client"));
			}
			assertThat(allowed).containsExactly(true, true, true, false);
			assertThat(this.failures).isEmpty();
		}
		finally {
			connectionFactory.destroy();
		}
	}

	@Test
	void decidesOnThePrimaryASentinelNames() {
		if (!RedisServerProcess.isAvailable()) {
			TestRedis.skipOrFail("there is no redis-server on the PATH to start a Sentinel");
		}
		try (LocalRedisSentinel sentinel = LocalRedisSentinel.start()) {
			LettuceConnectionFactory connectionFactory = new LettuceConnectionFactory(new RedisSentinelConfiguration(
					LocalRedisSentinel.PRIMARY_NAME, Set.of("127.0.0.1:" + sentinel.sentinelPort())));
			connectionFactory.afterPropertiesSet();
			connectionFactory.start();
			try {
				RateLimiter limiter = store(new SpringDataRedisScriptExecutor(connectionFactory), "sentinel")
					.limiter(RateLimitPolicy.of("api", Algorithm.GCRA, 3, Duration.ofMinutes(1)));
				List<Boolean> allowed = new ArrayList<>();
				for (int i = 0; i < 4; i++) {
					allowed.add(limiter.tryAcquire("client"));
				}
				assertThat(allowed).containsExactly(true, true, true, false);
				assertThat(this.failures).isEmpty();
				assertThat(sentinel.primary().command("DBSIZE")).isEqualTo(":1");
			}
			finally {
				connectionFactory.destroy();
			}
		}
	}

	@Test
	void decidesStackedPoliciesOnACluster() {
		if (!LocalRedisCluster.isAvailable()) {
			TestRedis.skipOrFail("there is no redis-server and redis-cli on the PATH to start a cluster");
		}
		try (LocalRedisCluster cluster = LocalRedisCluster.start()) {
			RedisClusterConfiguration configuration = new RedisClusterConfiguration(
					cluster.nodes().stream().map((node) -> "127.0.0.1:" + node.port()).toList());
			LettuceConnectionFactory connectionFactory = new LettuceConnectionFactory(configuration);
			connectionFactory.afterPropertiesSet();
			connectionFactory.start();
			try {
				RedisRateLimitStore store = store(new SpringDataRedisScriptExecutor(connectionFactory), "cluster");
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
			finally {
				connectionFactory.destroy();
			}
		}
	}

	private RedisRateLimitStore store(SpringDataRedisScriptExecutor executor, String name) {
		return RedisRateLimitStore.builder(executor)
			.keyPrefix("spring-" + name + ":" + RUN + ":")
			.timeout(Duration.ofSeconds(10))
			.failurePolicy(FailurePolicy.DENY)
			.onFailure((policies, cause) -> this.failures.add(cause))
			.build();
	}

}
