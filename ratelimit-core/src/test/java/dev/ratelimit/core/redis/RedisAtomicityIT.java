package dev.ratelimit.core.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.function.Supplier;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.Decision;
import dev.ratelimit.core.FailurePolicy;
import dev.ratelimit.core.KeyedPolicy;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.testing.FailLoudly;
import dev.ratelimit.core.testing.OpenStores;
import dev.ratelimit.core.testing.RedisExtension;
import dev.ratelimit.core.testing.TestRedis;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The article's experiment on every script, with Redis' own clock: 50 threads send 4 requests each, all
 * released at once, against one key with a limit of 10; exactly 10 pass, every time, each in one round trip. The
 * same holds on the asynchronous path, where 4 threads each send 50 decisions without waiting for any, so that
 * 200 are in flight on one connection.
 */
@ExtendWith(RedisExtension.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RedisAtomicityIT {

	private final OpenStores open = new OpenStores();

	private static final String RUN = Long.toString(ThreadLocalRandom.current().nextLong() >>> 1, 36);

	private static final int THREADS = 50;

	private static final int REQUESTS_PER_THREAD = 4;

	private static final int REPETITIONS = 25;

	/** On the asynchronous path, a few threads each send their decisions without waiting for any. */
	private static final int SENDERS = 4;

	private static final int REQUESTS_PER_SENDER = 50;

	private static final int ASYNC_REPETITIONS = 10;

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

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void allowsExactlyTheLimitToConcurrentAsynchronousRequests(Algorithm algorithm) throws Exception {
		// the leaky bucket admits its queue plus the request in service: a queue of 9 makes 10
		RateLimitPolicy policy = RateLimitPolicy.of("hot", algorithm, 10, YEAR);
		List<KeyedPolicy> limits = List.of(
				new KeyedPolicy("hot", (algorithm == Algorithm.LEAKY_BUCKET) ? policy.withBurst(9) : policy));
		for (int repetition = 0; repetition < ASYNC_REPETITIONS; repetition++) {
			CountingExecutor executor = new CountingExecutor(this.redis.executor());
			RedisRateLimitStore store = store(executor);
			List<List<Decision>> decided = raceWithoutWaiting(() -> store.decideAllAsync(limits).toCompletableFuture());
			assertThat(decided).filteredOn((decisions) -> decisions.get(0).allowed())
				.as("allowed in repetition %d", repetition)
				.hasSize(10);
			assertThat(executor.calls()).isEqualTo(SENDERS * REQUESTS_PER_SENDER);
		}
	}

	@Test
	void allowsExactlyTheSharedLimitToConcurrentAsynchronousStacksOnSeveralKeys() throws Exception {
		// 25 clients of 2 permits each under a shared limit of 10: each stack is one call on a single Redis
		RateLimitPolicy mine = RateLimitPolicy.of("mine", Algorithm.FIXED_WINDOW, 2, YEAR);
		RateLimitPolicy shared = RateLimitPolicy.of("shared", Algorithm.GCRA, 10, YEAR);
		AtomicInteger next = new AtomicInteger();
		for (int repetition = 0; repetition < ASYNC_REPETITIONS; repetition++) {
			RedisRateLimitStore store = store(new CountingExecutor(this.redis.executor()));
			List<List<Decision>> decided = raceWithoutWaiting(() -> store.decideAllAsync(List.of(
					new KeyedPolicy("client-" + next.getAndIncrement() % 25, mine), new KeyedPolicy("all", shared)))
				.toCompletableFuture());
			assertThat(decided).filteredOn((decisions) -> decisions.get(0).allowed())
				.as("allowed in repetition %d", repetition)
				.hasSize(10);
			assertThat(store.decideAll(List.of(new KeyedPolicy("all", shared))).get(0).allowed()).isFalse();
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

	/**
	 * Releases the senders at once; each sends its requests without waiting for a reply. Returns every
	 * request's decisions once all have come.
	 */
	private List<List<Decision>> raceWithoutWaiting(Supplier<CompletableFuture<List<Decision>>> request)
			throws Exception {
		CountDownLatch start = new CountDownLatch(1);
		ConcurrentLinkedQueue<CompletableFuture<List<Decision>>> sent = new ConcurrentLinkedQueue<>();
		List<Future<?>> sending = new ArrayList<>();
		for (int sender = 0; sender < SENDERS; sender++) {
			sending.add(this.threads.submit(() -> {
				start.await();
				for (int i = 0; i < REQUESTS_PER_SENDER; i++) {
					sent.add(request.get());
				}
				return null;
			}));
		}
		start.countDown();
		for (Future<?> sender : sending) {
			sender.get(60, TimeUnit.SECONDS);
		}
		CompletableFuture.allOf(sent.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
		List<List<Decision>> decided = new ArrayList<>();
		sent.forEach((stage) -> decided.add(stage.join()));
		assertThat(decided).hasSize(SENDERS * REQUESTS_PER_SENDER);
		return decided;
	}

}
