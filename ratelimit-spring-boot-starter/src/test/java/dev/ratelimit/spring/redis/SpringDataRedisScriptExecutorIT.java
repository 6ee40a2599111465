package dev.ratelimit.spring.redis;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import io.lettuce.core.resource.Delay;
import org.assertj.core.api.InstanceOfAssertFactories;
import org.junit.jupiter.api.Test;
import org.springframework.data.redis.connection.RedisConfiguration;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import dev.ratelimit.core.FailurePolicy;
import dev.ratelimit.core.redis.RedisRateLimitStore;
import dev.ratelimit.core.testing.RedisServerProcess;

import static org.assertj.core.api.Assertions.as;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Spring Data Redis executor, on Lettuce: what every executor must do, no caller waiting for a connection
 * that does not open, and a client of its own for the application's Redis that leaves the application's as it
 * is.
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
	// the silent socket is closed early on purpose, and again by the try statement
	@SuppressWarnings("try")
	void keepsNoCallerWaitingLongerThanTheMaximumWaitForAConnectionThatDoesNotOpen() throws Exception {
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
				CompletableFuture<Void> warmUp = store.warmUp()
					.orElseThrow()
					.warmUp(List.of(List.of(POLICY)))
					.toCompletableFuture();
				assertThat(store.limiter(POLICY).decide("client").allowed()).isFalse();
				assertThat(this.failures).singleElement(as(InstanceOfAssertFactories.THROWABLE))
					.isInstanceOf(TimeoutException.class)
					.hasMessage("Redis did not answer within 500 ms");
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

	@Test
	void opensAClientOfItsOwnForTheSameRedisAndLeavesTheApplicationsAsItIs() throws Exception {
		requireRedisServer();
		try (RedisServerProcess server = RedisServerProcess.start()) {
			Delay reconnectDelay = Delay.constant(Duration.ofMillis(50));
			ClientResources resources = DefaultClientResources.builder().reconnectDelay(reconnectDelay).build();
			ClientOptions options = ClientOptions.create();
			RedisStandaloneConfiguration database = standalone(server);
			database.setDatabase(3);
			LettuceConnectionFactory application = new LettuceConnectionFactory(database,
					LettuceClientConfiguration.builder()
						.clientResources(resources)
						.clientOptions(options)
						.clientName("orders")
						.build());
			application.afterPropertiesSet();
			try {
				@SuppressWarnings("unchecked")
				RedisAsyncCommands<byte[], byte[]> applicationCommands = (RedisAsyncCommands<byte[], byte[]>) application
					.getConnection()
					.getNativeConnection();
				try (SpringDataRedisScriptExecutor executor = new SpringDataRedisScriptExecutor(application)) {
					String write = "redis.call('SET', KEYS[1], '1') return {1}";
					until(executor, (outcome) -> outcome.reply() != null);
					assertThat(executor.execute(sha1(write), write, List.of("written"), List.of())
						.toCompletableFuture()
						.get(PATIENCE.toMillis(), TimeUnit.MILLISECONDS)).containsExactly(1L);
					assertThat(applicationCommands.exists("written".getBytes()).get()).isOne();
					assertThat(namedOrders(applicationCommands)).isEqualTo(2);
					server.kill();
					RedisFuture<String> queued = applicationCommands.ping();
					assertThat(until(executor, Outcome::unreachable)).hasSizeLessThanOrEqualTo(1);
					assertThat(call(executor, TIMEOUT).unreachable()).isTrue();
					server.restart();
					// the application's client queued its command while disconnected, and sends it once back
					assertThat(queued.get(PATIENCE.toMillis(), TimeUnit.MILLISECONDS)).isEqualTo("PONG");
					assertThat(application.getClientConfiguration().getClientOptions()).containsSame(options);
					assertThat(options.getDisconnectedBehavior()).isEqualTo(ClientOptions.DisconnectedBehavior.DEFAULT);
					assertThat(application.getClientConfiguration().getClientResources()).containsSame(resources);
					assertThat(resources.reconnectDelay()).isSameAs(reconnectDelay);
					until(executor, (outcome) -> outcome.reply() != null);
					assertThat(namedOrders(applicationCommands)).isEqualTo(2);
				}
				long deadline = System.nanoTime() + PATIENCE.toNanos();
				while (namedOrders(applicationCommands) > 1 && System.nanoTime() - deadline < 0) {
					Thread.sleep(10);
				}
				assertThat(namedOrders(applicationCommands)).as("clients left after closing the executor").isOne();
			}
			finally {
				application.destroy();
				resources.shutdown();
			}
		}
	}

	/** The clients connected with the application's name and database. */
	private static long namedOrders(RedisAsyncCommands<byte[], byte[]> commands) throws Exception {
		return commands.clientList()
			.get()
			.lines()
			.filter((client) -> client.contains(" name=orders ") && client.contains(" db=3 "))
			.count();
	}

}
