package dev.ratelimit.spring.redis;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.data.redis.connection.RedisClusterConfiguration;
import org.springframework.data.redis.connection.RedisSentinelConfiguration;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.jedis.JedisClientConfiguration;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;

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

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Jedis executor on a standalone Redis that forgets its scripts, on a Redis that does not answer or goes
 * away and comes back, on Sentinels that cannot be reached, and on a real Sentinel and a real Redis Cluster.
 */
@ExtendWith(RedisExtension.class)
class JedisScriptExecutorIT {

	private static final String RUN = Long.toString(ThreadLocalRandom.current().nextLong() >>> 1, 36);

	private static final RateLimitPolicy POLICY = RateLimitPolicy.of("api", Algorithm.GCRA, 3, Duration.ofMinutes(1));

	private final List<Throwable> failures = new ArrayList<>();

	@Test
	void returnsTheScriptsIntegers(TestRedis redis) throws Exception {
		try (JedisScriptExecutor executor = new JedisScriptExecutor(JedisStoreContractIT.connectionFactory(redis),
				Duration.ofSeconds(10))) {
			List<Long> reply = executor
				.execute("0000000000000000000000000000000000000000", "return {1, 0, -2, 9007199254740992}",
						List.of("k"), List.of())
				.toCompletableFuture()
				.get(10, TimeUnit.SECONDS);
			assertThat(reply).containsExactly(1L, 0L, -2L, 9007199254740992L);
		}
	}

	@Test
	void reloadsTheScriptsAfterAScriptFlush(TestRedis redis) {
		try (JedisScriptExecutor executor = new JedisScriptExecutor(JedisStoreContractIT.connectionFactory(redis),
				Duration.ofSeconds(10))) {
			RateLimiter limiter = store(executor, "flush").limiter(POLICY);
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
	void decidesByTheFailurePolicyWhenRedisDoesNotAnswerWithinTheTimeout() throws Exception {
		// a server that accepts connections, through its backlog, but never answers
		try (ServerSocket silent = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
			JedisConnectionFactory connectionFactory = new JedisConnectionFactory(
					new RedisStandaloneConfiguration("127.0.0.1", silent.getLocalPort()),
					JedisClientConfiguration.builder().readTimeout(Duration.ofMinutes(1)).build());
			try (JedisScriptExecutor executor = new JedisScriptExecutor(connectionFactory, Duration.ofMillis(100))) {
				Decision decision = store(executor, "silent").limiter(POLICY).decide("client");
				assertThat(decision.allowed()).isFalse();
				assertThat(this.failures).singleElement()
					.satisfies((failure) -> assertThat(failure).hasRootCauseInstanceOf(SocketTimeoutException.class));
			}
		}
	}

	@Test
	void decidesByTheFailurePolicyWhileRedisIsDownAndInRedisOnceItIsBack() {
		if (!RedisServerProcess.isAvailable()) {
			TestRedis.skipOrFail("there is no redis-server on the PATH to stop and restart");
		}
		try (RedisServerProcess server = RedisServerProcess.start();
				JedisScriptExecutor executor = new JedisScriptExecutor(
						new JedisConnectionFactory(new RedisStandaloneConfiguration("127.0.0.1", server.port())),
						Duration.ofSeconds(5))) {
			RateLimiter limiter = store(executor, "restart").limiter(POLICY);
			assertThat(limiter.tryAcquire("client")).isTrue();
			server.stop();
			// the pooled connection is broken, then no connection can be opened
			assertThat(limiter.tryAcquire("client")).isFalse();
			assertThat(limiter.tryAcquire("client")).isFalse();
			assertThat(this.failures).hasSize(2);
			server.restart();
			// a restarted Redis has lost its state and its scripts
			assertThat(List.of(limiter.tryAcquire("client"), limiter.tryAcquire("client"),
					limiter.tryAcquire("client"), limiter.tryAcquire("client")))
				.containsExactly(true, true, true, false);
			assertThat(this.failures).hasSize(2);
		}
	}

	@Test
	void triesToReachTheSentinelsAgainAfterAFailedAttempt() throws Exception {
		int closedPort;
		try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
			closedPort = socket.getLocalPort();
		}
		JedisConnectionFactory connectionFactory = new JedisConnectionFactory(
				new RedisSentinelConfiguration("primary", Set.of("127.0.0.1:" + closedPort)));
		try (JedisScriptExecutor executor = new JedisScriptExecutor(connectionFactory, Duration.ofSeconds(5))) {
			RateLimiter limiter = store(executor, "sentinel").limiter(POLICY);
			assertThat(limiter.tryAcquire("client")).isFalse();
			assertThat(limiter.tryAcquire("client")).isFalse();
			assertThat(this.failures).hasSize(2)
				.allSatisfy((failure) -> assertThat(failure).hasStackTraceContaining("All sentinels down"));
		}
	}

	@Test
	void decidesOnThePrimaryASentinelNames() {
		if (!RedisServerProcess.isAvailable()) {
			TestRedis.skipOrFail("there is no redis-server on the PATH to start a Sentinel");
		}
		try (LocalRedisSentinel sentinel = LocalRedisSentinel.start()) {
			RedisSentinelConfiguration configuration = new RedisSentinelConfiguration(LocalRedisSentinel.PRIMARY_NAME,
					Set.of("127.0.0.1:" + sentinel.sentinelPort()));
			try (JedisScriptExecutor executor = new JedisScriptExecutor(new JedisConnectionFactory(configuration),
					Duration.ofSeconds(10))) {
				RateLimiter limiter = store(executor, "sentinel").limiter(POLICY);
				List<Boolean> allowed = new ArrayList<>();
				for (int i = 0; i < 4; i++) {
					allowed.add(limiter.tryAcquire("client"));
				}
				assertThat(allowed).containsExactly(true, true, true, false);
				assertThat(this.failures).isEmpty();
				assertThat(sentinel.primary().command("DBSIZE")).isEqualTo(":1");
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
			try (JedisScriptExecutor executor = new JedisScriptExecutor(new JedisConnectionFactory(configuration),
					Duration.ofSeconds(10))) {
				RedisRateLimitStore store = store(executor, "cluster");
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
	}

	private RedisRateLimitStore store(JedisScriptExecutor executor, String name) {
		return RedisRateLimitStore.builder(executor)
			.keyPrefix("jedis-" + name + ":" + RUN + ":")
			.timeout(Duration.ofSeconds(10))
			.failurePolicy(FailurePolicy.DENY)
			.onFailure((policies, cause) -> this.failures.add(cause))
			.build();
	}

}
