package dev.ratelimit.spring.redis;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.List;
import java.util.Set;

import org.junit.jupiter.api.Test;
import org.springframework.data.redis.connection.RedisConfiguration;
import org.springframework.data.redis.connection.RedisSentinelConfiguration;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.jedis.JedisClientConfiguration;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;

import dev.ratelimit.core.Decision;
import dev.ratelimit.core.RateLimiter;
import dev.ratelimit.core.testing.RedisServerProcess;
import dev.ratelimit.core.testing.TestRedis;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Jedis executor: what every executor must do, and the failure policy deciding while Redis does not
 * answer, is away or cannot be found through its Sentinels.
 */
class JedisScriptExecutorIT extends AbstractScriptExecutorIT {

	/** Spring Data Redis' and Commons Pool's default. */
	private static final int POOL_SIZE = 8;

	@Override
	Connection connect(RedisConfiguration configuration, Duration timeout) {
		return open(configuration, timeout);
	}

	static Connection open(RedisConfiguration configuration) {
		return open(configuration, Duration.ofSeconds(10));
	}

	private static Connection open(RedisConfiguration configuration, Duration timeout) {
		JedisScriptExecutor executor = new JedisScriptExecutor(connectionFactory(configuration,
				JedisConnectionFactory::new, JedisConnectionFactory::new, JedisConnectionFactory::new), timeout,
				POOL_SIZE);
		return new Connection(executor, executor::close);
	}

	@Test
	void decidesByTheFailurePolicyWhenRedisDoesNotAnswerWithinTheTimeout() throws Exception {
		// a server that accepts connections, through its backlog, but never answers
		try (ServerSocket silent = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
			JedisConnectionFactory connectionFactory = new JedisConnectionFactory(
					new RedisStandaloneConfiguration("127.0.0.1", silent.getLocalPort()),
					JedisClientConfiguration.builder().readTimeout(Duration.ofMinutes(1)).build());
			try (JedisScriptExecutor executor = new JedisScriptExecutor(connectionFactory, Duration.ofMillis(100), POOL_SIZE)) {
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
						Duration.ofSeconds(5), POOL_SIZE)) {
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
		try (Connection connection = connect(
				new RedisSentinelConfiguration("primary", Set.of("127.0.0.1:" + closedPort)))) {
			RateLimiter limiter = store(connection.executor(), "sentinel").limiter(POLICY);
			assertThat(limiter.tryAcquire("client")).isFalse();
			assertThat(limiter.tryAcquire("client")).isFalse();
			assertThat(this.failures).hasSize(2)
				.allSatisfy((failure) -> assertThat(failure).hasStackTraceContaining("All sentinels down"));
		}
	}

}
