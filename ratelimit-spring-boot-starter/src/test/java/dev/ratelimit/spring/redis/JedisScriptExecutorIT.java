package dev.ratelimit.spring.redis;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.data.redis.connection.RedisConfiguration;
import org.springframework.data.redis.connection.RedisSentinelConfiguration;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.jedis.JedisClientConfiguration;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;

import dev.ratelimit.core.Decision;
import dev.ratelimit.core.RateLimiter;
import dev.ratelimit.core.redis.ScriptNotSentException;
import dev.ratelimit.core.testing.RedisServerProcess;
import dev.ratelimit.core.testing.TestRedis;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Jedis executor: what every executor must do, the failure policy deciding while Redis does not answer, is
 * away or cannot be found through its Sentinels, and calls that find every pooled connection in use.
 */
@ExtendWith(OutputCaptureExtension.class)
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
				// the connection never completed its handshake, so nothing of the call was sent
				assertThat(this.failures).singleElement()
					.satisfies((failure) -> assertThat(failure).isInstanceOf(ScriptNotSentException.class)
						.hasRootCauseInstanceOf(SocketTimeoutException.class));
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
			// a restarted Redis has lost its state and its scripts: the state is restored from what the store last
			// heard, so the permit taken before the restart stays taken
			assertThat(List.of(limiter.tryAcquire("client"), limiter.tryAcquire("client"),
					limiter.tryAcquire("client")))
				.containsExactly(true, true, false);
			assertThat(this.failures).hasSize(2);
		}
	}

	@Test
	void failsCallsThatFindEveryPooledConnectionInUseForTheTimeoutAsClientBusy(TestRedis redis,
			CapturedOutput output) throws Exception {
		Duration timeout = Duration.ofMillis(200);
		// each call holds its connection for 30 ms of Redis' time, and Redis runs one at a time
		String busy = "local t = redis.call('TIME') local start = t[1] * 1000000 + t[2] "
				+ "repeat t = redis.call('TIME') until t[1] * 1000000 + t[2] - start >= 30000 return {1}";
		String sha1 = sha1(busy);
		int callers = 16;
		ExecutorService threads = Executors.newFixedThreadPool(callers);
		try (JedisScriptExecutor executor = new JedisScriptExecutor(new JedisConnectionFactory(standalone(redis)),
				timeout, 2)) {
			// loads the script and opens both connections: while Commons Pool opens one, it lets the callers wait
			// for that before their timeout starts
			until(executor, (outcome) -> outcome.reply() != null);
			CompletableFuture<?> first = CompletableFuture
				.runAsync(() -> executor.execute(sha1, busy, List.of("busy"), List.of()), threads);
			assertThat(executor.execute(sha1, busy, List.of("busy"), List.of()).toCompletableFuture().get())
				.containsExactly(1L);
			first.get(10, TimeUnit.SECONDS);
			CountDownLatch start = new CountDownLatch(1);
			List<CompletableFuture<Outcome>> calls = new ArrayList<>();
			for (int i = 0; i < callers; i++) {
				calls.add(CompletableFuture.supplyAsync(() -> {
					try {
						start.await();
					}
					catch (InterruptedException ex) {
						Thread.currentThread().interrupt();
					}
					long began = System.nanoTime();
					CompletableFuture<List<Long>> reply = executor.execute(sha1, busy, List.of("busy"), List.of())
						.toCompletableFuture();
					Duration elapsed = Duration.ofNanos(System.nanoTime() - began);
					return reply.handle((values, ex) -> new Outcome(values, ex, false, elapsed)).join();
				}, threads));
			}
			start.countDown();
			List<Outcome> outcomes = new ArrayList<>();
			for (CompletableFuture<Outcome> call : calls) {
				outcomes.add(call.get(10, TimeUnit.SECONDS));
			}
			List<Outcome> busyCalls = outcomes.stream().filter((outcome) -> outcome.reply() == null).toList();
			assertThat(outcomes.size() - busyCalls.size()).as("calls that had a connection").isBetween(2, callers - 1);
			assertThat(busyCalls).allSatisfy((outcome) -> {
				assertThat(outcome.failure()).isInstanceOfSatisfying(ScriptNotSentException.class,
						(notSent) -> assertThat(notSent.reason()).isEqualTo(ScriptNotSentException.Reason.CLIENT_BUSY));
				assertThat(outcome.elapsed()).isBetween(timeout, timeout.plusMillis(50));
			});
			assertThat(output.getAll()).doesNotContain("\tat redis.clients", "\tat org.apache.commons.pool2");
		}
		finally {
			threads.shutdownNow();
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
