package dev.ratelimit.benchmarks;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.redis.RedisRateLimitStore;
import dev.ratelimit.core.testing.LogRecorder;
import dev.ratelimit.core.testing.RedisExtension;
import dev.ratelimit.core.testing.TestRedis;
import io.lettuce.core.RedisURI;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.openjdk.jmh.annotations.Param;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * Runs every Redis contender on a real Redis, so that a contender that cannot run, or one of ours whose decisions
 * do not come from Redis, shows before a benchmark run is spent on it. Says nothing about speed.
 */
@ExtendWith(RedisExtension.class)
class RedisContendersIT {

	@Test
	void everyContenderAndEveryFloorIsTimedOnRedis(TestRedis redis) throws Exception {
		String[] contenders = Stream
			.concat(Stream.of(RedisContender.FLOORS),
					Stream.of(RedisBenchmark.class.getField("contender").getAnnotation(Param.class).value()))
			.toArray(String[]::new);
		Map<String, Double> medians = InterleavedLatency.medians(RedisURI.create(redis.uri()).getPort(), contenders,
				1, 2);
		assertThat(medians.keySet()).containsExactly(contenders);
		assertThat(medians.values()).allSatisfy((micros) -> assertThat(micros).isPositive());
	}

	@Test
	void aDecisionMadeWithoutRedisVoidsTheMeasurement() throws Exception {
		int closed;
		try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
			closed = socket.getLocalPort();
		}
		// Jedis connects on the first call: the store falls back to its local decision, which allows
		try (LogRecorder log = LogRecorder.record(RedisRateLimitStore.class.getName())) {
			assertThatIllegalStateException()
				.isThrownBy(() -> InterleavedLatency.medians(closed, new String[] { "GCRA-jedis" }, 0, 1))
				.withMessageContaining("without Redis");
			assertThat(log.messages()).isNotEmpty()
				.allSatisfy((message) -> assertThat(message).contains("the LOCAL failure policy"));
		}
	}

	@Test
	void aRequestTheGatewayAllowedWithoutRedisVoidsTheMeasurement() throws Exception {
		int closed;
		try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
			closed = socket.getLocalPort();
		}
		// the gateway's limiter allows a request whose script failed
		assertThatIllegalStateException()
			.isThrownBy(() -> InterleavedLatency.medians(closed, new String[] { RedisContender.GATEWAY }, 0, 1))
			.withMessageContaining("without Redis");
	}

	@Test
	void theGatewayDeniesOnceItsBurstIsTaken(TestRedis redis) throws Exception {
		// the gateway's script counts whole seconds of Redis' clock, and each second that turns while the calls are
		// made adds one token at this rate: the burst of 3 is all a key gets, plus one a turn of the second
		RateLimitPolicy policy = RateLimitPolicy.of("three", Algorithm.TOKEN_BUCKET, 1, Duration.ofSeconds(1))
			.withBurst(3);
		LettuceConnectionFactory connections = RedisContender.springConnections(RedisURI.create(redis.uri()).getPort());
		try {
			AtomicLong fallbacks = new AtomicLong();
			RedisContender.Limiter gateway = GatewayLimiter.of(connections, policy, fallbacks);
			byte[] unused = new byte[0];
			// keys of this run alone: a Redis given by REDIS_URL may hold an earlier run's buckets
			String a = "a-" + System.nanoTime();
			String b = "b-" + System.nanoTime();
			long start = System.nanoTime();
			int allowed = 0;
			while (allowed < 100 && gateway.tryAcquire(a, unused)) {
				allowed++;
			}
			long turns = Duration.ofNanos(System.nanoTime() - start).toSeconds() + 1;
			assertThat(allowed).isBetween(3, 3 + (int) turns);
			assertThat(gateway.tryAcquire(b, unused)).isTrue();
			assertThat(fallbacks).hasValue(0);
		}
		finally {
			connections.destroy();
		}
	}

}
