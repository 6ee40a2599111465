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
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.testing.FailLoudly;
import dev.ratelimit.core.testing.OpenStores;
import dev.ratelimit.core.testing.RedisExtension;
import dev.ratelimit.core.testing.TestRedis;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The article's experiment on every script, with Redis' own clock: 50 threads send 4 requests each, all
 * released at once, against one key with a limit of 10; exactly 10 pass, every time, each in one round trip.
 */
@ExtendWith(RedisExtension.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RedisAtomicityIT {

	private final OpenStores open = new OpenStores();

	private static final String RUN = Long.toString(ThreadLocalRandom.current().nextLong() >>> 1, 36);

	private static final int THREADS = 50;

	private static final int REQUESTS_PER_THREAD = 4;

	private static final int REPETITIONS = 25;

	/** Long enough that no window boundary and no refill falls within a repetition. */
	private static final Duration YEAR = Duration.ofDays(365);

	private final AtomicInteger stores = new AtomicInteger();

	private ExecutorService threads;

	private TestRedis redis;

	@BeforeAll
	void startThreads() {
		this.threads = Executors.newFixedThreadPool(THREADS);
	}

	@AfterAll
	void stopThreads() {
		this.threads.shutdownNow();
	}

	@BeforeEach
	void useRedis(TestRedis redis) {
		this.redis = redis;
	}

	@AfterEach
	void closeStores() {
		this.open.closeAll();
	}
	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void allowsExactlyTheLimitToConcurrentRequests(Algorithm algorithm) throws Exception {
		// the leaky bucket admits its queue plus the request in service: a queue of 9 makes 10
		RateLimitPolicy policy = RateLimitPolicy.of("hot", algorithm, 10, YEAR);
		RateLimitPolicy limited = (algorithm == Algorithm.LEAKY_BUCKET) ? policy.withBurst(9) : policy;
		for (int repetition = 0; repetition < REPETITIONS; repetition++) {
			CountingExecutor executor = new CountingExecutor(this.redis.executor());
			RedisRateLimitStore store = store(executor);
			int allowed = race((key) -> store.limiter(limited).tryAcquire(key));
			assertThat(allowed).as("allowed in repetition %d", repetition).isEqualTo(10);
			assertThat(executor.calls()).isEqualTo(THREADS * REQUESTS_PER_THREAD);
		}
	}

	@Test
	void allowsExactlyTheTightestLimitToConcurrentStackedRequests() throws Exception {
		List<RateLimitPolicy> stack = List.of(RateLimitPolicy.of("minute", Algorithm.SLIDING_LOG, 50, YEAR),
				RateLimitPolicy.of("burst", Algorithm.GCRA, 10, YEAR),
				RateLimitPolicy.of("day", Algorithm.FIXED_WINDOW, 1000, YEAR));
		for (int repetition = 0; repetition < REPETITIONS; repetition++) {
			CountingExecutor executor = new CountingExecutor(this.redis.executor());
			RedisRateLimitStore store = store(executor);
			int allowed = race((key) -> store.decideAll(key, stack).get(0).allowed());
			assertThat(allowed).as("allowed in repetition %d", repetition).isEqualTo(10);
			assertThat(executor.calls()).isEqualTo(THREADS * REQUESTS_PER_THREAD);
			// the requests refused by GCRA took nothing from the others
			assertThat(store.decideAll("hot", stack)).extracting((decision) -> decision.remaining())
				.containsExactly(40L, 0L, 990L);
		}
	}

	private RedisRateLimitStore store(CountingExecutor executor) {
		return this.open.track(RedisRateLimitStore.builder(executor)
			.keyPrefix("atomicity:" + RUN + ":" + this.stores.incrementAndGet() + ":")
			// every request must reach Redis, whose atomicity is under test
			.localDenials(false)
			.timeout(Duration.ofSeconds(10))
			.failurePolicy(FailurePolicy.DENY)
			.onFailure(FailLoudly.ON_REDIS_FAILURE)
			.build());
	}

	private int race(Function<String, Boolean> request) throws Exception {
		CountDownLatch start = new CountDownLatch(1);
		List<Future<Integer>> results = new ArrayList<>();
		for (int thread = 0; thread < THREADS; thread++) {
			results.add(this.threads.submit(() -> {
				start.await();
				int allowed = 0;
				for (int i = 0; i < REQUESTS_PER_THREAD; i++) {
					allowed += request.apply("hot") ? 1 : 0;
				}
				return allowed;
			}));
		}
		start.countDown();
		int allowed = 0;
		for (Future<Integer> result : results) {
			allowed += result.get(60, TimeUnit.SECONDS);
		}
		return allowed;
	}

}
