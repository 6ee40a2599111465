package dev.ratelimit.spring.redis;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeoutException;

import org.assertj.core.api.InstanceOfAssertFactories;
import org.junit.jupiter.api.Test;
import org.springframework.data.redis.connection.RedisConfiguration;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import dev.ratelimit.core.redis.FailurePolicy;
import dev.ratelimit.core.redis.RedisRateLimitStore;

import static org.assertj.core.api.Assertions.as;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Spring Data Redis executor, on Lettuce: what every executor must do, and no caller waiting for a
 * connection that does not open.
 */
class SpringDataRedisScriptExecutorIT extends AbstractScriptExecutorIT {

	/** Lettuce bounds no wait by the store's timeout: the store cancels the calls it gives up on. */
	@Override
	Connection connect(RedisConfiguration configuration, Duration timeout) {
		return open(configuration);
	}

	static Connection open(RedisConfiguration configuration) {
		LettuceConnectionFactory connectionFactory = connectionFactory(configuration, LettuceConnectionFactory::new,
				LettuceConnectionFactory::new, LettuceConnectionFactory::new);
		connectionFactory.afterPropertiesSet();
		connectionFactory.start();
		SpringDataRedisScriptExecutor executor = new SpringDataRedisScriptExecutor(connectionFactory);
		return new Connection(executor, () -> {
			executor.close();
			connectionFactory.destroy();
		});
	}

	@Test
	void keepsNoCallerWaitingLongerThanTheTimeoutForAConnectionThatDoesNotOpen() throws Exception {
		// a server that accepts connections, through its backlog, but never answers Lettuce's handshake
		try (ServerSocket silent = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
			LettuceConnectionFactory connectionFactory = new LettuceConnectionFactory(
					new RedisStandaloneConfiguration("127.0.0.1", silent.getLocalPort()),
					LettuceClientConfiguration.builder().commandTimeout(Duration.ofMinutes(1)).build());
			connectionFactory.afterPropertiesSet();
			SpringDataRedisScriptExecutor executor = new SpringDataRedisScriptExecutor(connectionFactory);
			try {
				RedisRateLimitStore store = RedisRateLimitStore.builder(executor)
					.failurePolicy(FailurePolicy.DENY)
					.onFailure((policies, cause) -> this.failures.add(cause))
					.build();
				CompletableFuture<Void> warmUp = store.warmUp(List.of(List.of(POLICY)));
				assertThat(store.limiter(POLICY).decide("client").allowed()).isFalse();
				assertThat(this.failures).singleElement(as(InstanceOfAssertFactories.THROWABLE))
					.isInstanceOf(TimeoutException.class)
					.hasMessage("Redis did not answer within 100 ms");
				assertThat(warmUp).isNotDone();
			}
			finally {
				// resets the connection still waiting for its handshake, which would hold up the shutdown
				silent.close();
				executor.close();
				connectionFactory.destroy();
			}
		}
	}

}
