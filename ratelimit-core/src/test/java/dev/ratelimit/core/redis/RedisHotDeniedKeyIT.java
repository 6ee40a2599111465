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
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.RateLimiter;
import dev.ratelimit.core.testing.OpenStores;
import dev.ratelimit.core.testing.RedisExtension;
import dev.ratelimit.core.testing.TestRedis;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * One exhausted hot key hammered by 64 callers on Redis' own clock, with and without local denials: how many
 * Redis calls each request costs, and how many decisions a second the instance makes.
 */
@ExtendWith(RedisExtension.class)
class RedisHotDeniedKeyIT {

	private static final String RUN = Long.toString(ThreadLocalRandom.current().nextLong() >>> 1, 36);

	private static final int CALLERS = 64;

	private static final int MAX_PER_CALLER = 200_000;

	private static final long RUN_NANOS = TimeUnit.SECONDS.toNanos(2);

	/** Exhausted by its first ten requests, and then for minutes, longer than the run. */
	private static final RateLimitPolicy POLICY = RateLimitPolicy.of("hot", Algorithm.GCRA, 10, Duration.ofHours(1));

	private TestRedis redis;

	private final OpenStores open = new OpenStores();

	private final ExecutorService callers = Executors.newFixedThreadPool(CALLERS);

	@BeforeEach
	void useRedis(TestRedis redis) {
		this.redis = redis;
	}

	@AfterEach
	void stop() {
		this.callers.shutdownNow();
		this.open.closeAll();
	}

	@Test
	void anExhaustedHotKeyCostsRedisAlmostNothing() throws Exception {
		Run asking = hammer(false);
		Run denying = hammer(true);
		System.out.printf("One exhausted hot key, %d callers: without local denials %d requests, %d Redis calls,"
				+ " %.0f decisions/s; with %d requests, %d Redis calls, %.0f decisions/s (%.0fx)%n", CALLERS,
				asking.requests, asking.calls, asking.perSecond(), denying.requests, denying.calls,
				denying.perSecond(), denying.perSecond() / asking.perSecond());
		assertThat(asking.callsPerRequest()).isEqualTo(1.0);
		assertThat(denying.callsPerRequest()).as("Redis calls a request").isLessThanOrEqualTo(0.01);
		assertThat(denying.perSecond()).as("decisions a second, against %.0f asking Redis", asking.perSecond())
			.isGreaterThanOrEqualTo(20 * asking.perSecond());
	}

	private Run hammer(boolean localDenials) throws Exception {
		CountingExecutor executor = new CountingExecutor(this.redis.executor());
		RedisRateLimitStore store = this.open.track(RedisRateLimitStore.builder(executor)
			.keyPrefix("hot-denied:" + RUN + ":" + localDenials + ":")
			.timeout(Duration.ofSeconds(5))
			.localDenials(localDenials)
			.build());
		RateLimiter limiter = store.limiter(POLICY);
		while (limiter.decide("hot").allowed()) {
			assertThat((long) executor.calls()).as("requests to exhaust the key").isLessThanOrEqualTo(POLICY.limit());
		}
		int before = executor.calls();
		CountDownLatch start = new CountDownLatch(1);
		List<Future<Long>> counts = new ArrayList<>();
		for (int i = 0; i < CALLERS; i++) {
			counts.add(this.callers.submit(() -> {
				start.await();
				long deadline = System.nanoTime() + RUN_NANOS;
				long requests = 0;
				while (requests < MAX_PER_CALLER && System.nanoTime() - deadline < 0) {
					if (limiter.decide("hot").allowed()) {
						throw new AssertionError("The exhausted key admitted a request");
					}
					requests++;
				}
				return requests;
			}));
		}
		long began = System.nanoTime();
		start.countDown();
		long requests = 0;
		for (Future<Long> count : counts) {
			requests += count.get(RUN_NANOS + TimeUnit.SECONDS.toNanos(30), TimeUnit.NANOSECONDS);
		}
		long elapsed = System.nanoTime() - began;
		return new Run(requests, executor.calls() - before, elapsed);
	}

	private record Run(long requests, long calls, long nanos) {

		double callsPerRequest() {
			return (double) this.calls / this.requests;
		}

		double perSecond() {
			return this.requests * 1e9 / this.nanos;
		}

	}

}
