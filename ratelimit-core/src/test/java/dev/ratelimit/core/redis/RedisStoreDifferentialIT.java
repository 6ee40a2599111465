package dev.ratelimit.core.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;
import java.util.stream.Stream;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.Decision;
import dev.ratelimit.core.FailurePolicy;
import dev.ratelimit.core.ManualTimeSource;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.RateLimitStore;
import dev.ratelimit.core.memory.InMemoryRateLimitStore;
import dev.ratelimit.core.testing.FailLoudly;
import dev.ratelimit.core.testing.OpenStores;
import dev.ratelimit.core.testing.RedisExtension;
import dev.ratelimit.core.testing.TestRedis;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Random traces through the in-memory store and the Redis store side by side: every decision must be the
 * same, field by field, for every algorithm and for stacked policies, on policies whose interval is and is
 * not a whole number of microseconds.
 */
@ExtendWith(RedisExtension.class)
class RedisStoreDifferentialIT {

	private static final String RUN = Long.toString(ThreadLocalRandom.current().nextLong() >>> 1, 36);

	private static final long[] LIMITS = { 1, 2, 3, 7, 10, 64, 100 };

	private static final long[] WINDOWS_MICROS = { 1, 7, 999, 250_000, 1_000_000, 2_500_000, 7_000_000, 10_000_000,
			60_000_000, 3_600_000_000L };

	private static final AtomicInteger stores = new AtomicInteger();

	private TestRedis redis;

	private final OpenStores open = new OpenStores();

	@BeforeEach
	void useRedis(TestRedis redis) {
		this.redis = redis;
	}

	static Stream<Arguments> policies() {
		Random random = new Random(20261129);
		return Stream.of(Algorithm.values())
			.flatMap((algorithm) -> IntStream.range(0, 12)
				.mapToObj((i) -> Arguments.of(randomPolicy(random, algorithm, "p"), random.nextLong())));
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("policies")
	void decidesEveryRequestAsTheInMemoryStore(RateLimitPolicy policy, long seed) {
		Random random = new Random(seed);
		ManualTimeSource memoryClock = new ManualTimeSource();
		ManualTimeSource redisClock = new ManualTimeSource();
		RateLimitStore memory = InMemoryRateLimitStore.builder().timeSource(memoryClock).build();
		RateLimitStore redis = redisStore(redisClock);
		long now = 0;
		for (int i = 0; i < 250; i++) {
			now = nextTime(random, now, policy.windowMicros());
			memoryClock.set(now * 1000);
			redisClock.set(now * 1000);
			String key = "k" + random.nextInt(3);
			Decision expected = memory.limiter(policy).decide(key);
			Decision actual = redis.limiter(policy).decide(key);
			assertThat(actual).as("request %d at %d us, key %s", i, now, key).isEqualTo(expected);
		}
	}

	static Stream<Arguments> windowCounts() {
		return Stream.of(
				// packed into one integer: count, or both counts, beside the window index modulo 2^21
				RateLimitPolicy.of("p", Algorithm.FIXED_WINDOW, 10, Duration.ofNanos(1000)),
				RateLimitPolicy.of("p", Algorithm.FIXED_WINDOW, 3, Duration.ofSeconds(7)),
				RateLimitPolicy.of("p", Algorithm.SLIDING_WINDOW_COUNTER, 10, Duration.ofNanos(7000)),
				RateLimitPolicy.of("p", Algorithm.SLIDING_WINDOW_COUNTER, 65_535, Duration.ofNanos(1000))
					.withCost(20_000),
				// too large to pack: kept as a string
				RateLimitPolicy.of("p", Algorithm.FIXED_WINDOW, 1L << 32, Duration.ofNanos(1000)).withCost(1L << 30),
				RateLimitPolicy.of("p", Algorithm.SLIDING_WINDOW_COUNTER, 65_536, Duration.ofNanos(1000))
					.withCost(20_000))
			.map(Arguments::of);
	}

	/**
	 * Redis keeps a window index modulo 2^21 when it packs the counts into one integer: a trace across the
	 * index where that wraps to zero decides as the in-memory store, whether the state is packed or, for a
	 * limit too large to pack, a string.
	 */
	@ParameterizedTest(name = "{0}")
	@MethodSource("windowCounts")
	void decidesAcrossTheWrapOfThePackedWindowIndex(RateLimitPolicy policy) {
		long window = policy.windowMicros();
		long offset = (3 * (1L << 21) - 3) * window;
		Random random = new Random(policy.limit());
		ManualTimeSource memoryClock = new ManualTimeSource();
		ManualTimeSource redisClock = new ManualTimeSource();
		RateLimitStore memory = InMemoryRateLimitStore.builder().timeSource(memoryClock).build();
		RateLimitStore redis = redisStore(redisClock);
		long now = 0;
		while (now < 8 * window) {
			memoryClock.set(now * 1000);
			redisClock.set((offset + now) * 1000);
			Decision expected = memory.limiter(policy).decide("k");
			assertThat(redis.limiter(policy).decide("k")).as("request at %d us", now).isEqualTo(expected);
			now = nextTime(random, now, window);
		}
	}

	static Stream<Arguments> stacks() {
		Random random = new Random(7);
		return IntStream.range(0, 24).mapToObj((i) -> {
			List<RateLimitPolicy> stack = new ArrayList<>();
			int size = 2 + random.nextInt(3);
			for (int p = 0; p < size; p++) {
				Algorithm algorithm = Algorithm.values()[random.nextInt(Algorithm.values().length)];
				stack.add(randomPolicy(random, algorithm, "p" + p));
			}
			return Arguments.of(stack, random.nextLong());
		});
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("stacks")
	void decidesStackedPoliciesAsTheInMemoryStore(List<RateLimitPolicy> stack, long seed) {
		Random random = new Random(seed);
		ManualTimeSource memoryClock = new ManualTimeSource();
		ManualTimeSource redisClock = new ManualTimeSource();
		RateLimitStore memory = InMemoryRateLimitStore.builder().timeSource(memoryClock).build();
		RateLimitStore redis = redisStore(redisClock);
		long shortest = stack.stream().mapToLong(RateLimitPolicy::windowMicros).min().orElseThrow();
		long now = 0;
		for (int i = 0; i < 250; i++) {
			now = nextTime(random, now, shortest);
			memoryClock.set(now * 1000);
			redisClock.set(now * 1000);
			String key = "k" + random.nextInt(2);
			List<RateLimitPolicy> policies = (random.nextInt(4) == 0) ? stack.subList(0, 1) : stack;
			List<Decision> expected = memory.decideAll(key, policies);
			List<Decision> actual = redis.decideAll(key, policies);
			assertThat(actual).as("request %d at %d us, key %s", i, now, key).isEqualTo(expected);
		}
	}

	@AfterEach
	void closeStores() {
		this.open.closeAll();
	}

	private RateLimitStore redisStore(ManualTimeSource clock) {
		return this.open.track(RedisRateLimitStore.builder(this.redis.executor())
			.keyPrefix("differential:" + RUN + ":" + stores.incrementAndGet() + ":")
			.timeSource(clock)
			.timeout(Duration.ofSeconds(10))
			.failurePolicy(FailurePolicy.DENY)
			.onFailure(FailLoudly.ON_REDIS_FAILURE)
			.build());
	}

	static RateLimitPolicy randomPolicy(Random random, Algorithm algorithm, String name) {
		long limit = LIMITS[random.nextInt(LIMITS.length)];
		Duration window = Duration.ofNanos(WINDOWS_MICROS[random.nextInt(WINDOWS_MICROS.length)] * 1000);
		RateLimitPolicy policy = RateLimitPolicy.of(name, algorithm, limit, window);
		if (algorithm == Algorithm.TOKEN_BUCKET || algorithm == Algorithm.GCRA
				|| algorithm == Algorithm.LEAKY_BUCKET) {
			policy = policy.withBurst(1 + random.nextInt((int) Math.min(2 * limit + 3, 40)));
		}
		if (random.nextInt(3) == 0) {
			policy = policy.withCost(1 + random.nextInt((int) Math.min(policy.capacity(), 5)));
		}
		if (algorithm == Algorithm.LEAKY_BUCKET && random.nextBoolean()) {
			policy = policy.withDelayAfter(random.nextInt((int) policy.burst() + 1));
		}
		return policy;
	}

	/** Bursts at one instant, small steps, long gaps, and instants on or next to window boundaries. */
	static long nextTime(Random random, long now, long window) {
		int move = random.nextInt(20);
		if (move < 7) {
			return now;
		}
		if (move < 13) {
			return now + 1 + (long) (random.nextDouble() * window / 4);
		}
		if (move < 15) {
			return now + window * (1 + random.nextInt(3));
		}
		if (move < 17) {
			return now + 1;
		}
		long boundary = (now / window + 1) * window;
		return Math.max(now, boundary + random.nextInt(5) - 2);
	}

}
