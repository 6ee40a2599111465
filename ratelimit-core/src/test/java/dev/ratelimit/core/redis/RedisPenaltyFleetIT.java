package dev.ratelimit.core.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.Decision;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.RateLimiter;
import dev.ratelimit.core.testing.LettuceScriptExecutor;
import dev.ratelimit.core.testing.OpenStores;
import dev.ratelimit.core.testing.RedisExtension;
import dev.ratelimit.core.testing.TestRedis;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Three stores on one real Redis, each on a Lettuce client of its own and on Redis' clock, share a penalty: a
 * burst spread over the fleet gets exactly the limit, and the key is then refused on every instance for the
 * rest of the penalty.
 */
@ExtendWith(RedisExtension.class)
class RedisPenaltyFleetIT {

	private static final String RUN = Long.toString(ThreadLocalRandom.current().nextLong() >>> 1, 36);

	private static final int INSTANCES = 3;

	private static final int REQUESTS = 300;

	private static final Duration PENALTY = Duration.ofMinutes(1);

	private final OpenStores stores = new OpenStores();

	private final List<LettuceScriptExecutor> clients = new ArrayList<>();

	@AfterEach
	void close() {
		this.stores.closeAll();
		this.clients.forEach(LettuceScriptExecutor::close);
	}

	@Test
	void refusesAKeyOnEveryInstanceOnceItWentOverAnywhere(TestRedis redis) throws Exception {
		RateLimitPolicy policy = RateLimitPolicy.of("penalty", Algorithm.SLIDING_LOG, 10, Duration.ofSeconds(10))
			.withPenalty(PENALTY);
		List<RateLimiter> fleet = new ArrayList<>();
		for (int i = 0; i < INSTANCES; i++) {
			LettuceScriptExecutor client = LettuceScriptExecutor.standalone(redis.uri());
			this.clients.add(client);
			fleet.add(this.stores.track(RedisRateLimitStore.builder(client)
				.keyPrefix("penalty-fleet:" + RUN + ":")
				.timeout(Duration.ofSeconds(5))
				.build()).limiter(policy));
		}
		ExecutorService threads = Executors.newFixedThreadPool(60);
		try {
			CountDownLatch start = new CountDownLatch(1);
			List<Future<Decision>> calls = new ArrayList<>();
			for (int i = 0; i < REQUESTS; i++) {
				RateLimiter instance = fleet.get(i % INSTANCES);
				calls.add(threads.submit(() -> {
					start.await();
					return instance.decide("client");
				}));
			}
			start.countDown();
			int allowed = 0;
			for (Future<Decision> call : calls) {
				allowed += call.get(30, TimeUnit.SECONDS).allowed() ? 1 : 0;
			}
			assertThat(allowed).as("allowed across the fleet").isEqualTo(10);
		}
		finally {
			threads.shutdownNow();
		}
		for (RateLimiter instance : fleet) {
			Decision refused = instance.decide("client");
			assertThat(refused.allowed()).isFalse();
			// the penalty started within the burst, which took far less than ten seconds
			assertThat(Duration.ofNanos(refused.retryAfterNanos())).isBetween(PENALTY.minusSeconds(10), PENALTY);
			assertThat(instance.decide("another client").allowed()).isTrue();
		}
	}

}
