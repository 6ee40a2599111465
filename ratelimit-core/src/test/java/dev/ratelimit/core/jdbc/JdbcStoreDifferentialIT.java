package dev.ratelimit.core.jdbc;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
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
import dev.ratelimit.core.ManualTimeSource;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.RateLimitStore;
import dev.ratelimit.core.memory.InMemoryRateLimitStore;
import dev.ratelimit.core.testing.OpenStores;
import dev.ratelimit.core.testing.PostgresExtension;
import dev.ratelimit.core.testing.TestPostgres;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Random traces through the in-memory store, which decides as the reference does, and the PostgreSQL store side
 * by side: every decision must be the same, field by field, for every algorithm and for stacked policies, on
 * policies whose interval is and is not a whole number of microseconds.
 */
@ExtendWith(PostgresExtension.class)
class JdbcStoreDifferentialIT {

	private static final long[] LIMITS = { 1, 2, 3, 7, 10, 64, 100 };

	private static final long[] WINDOWS_MICROS = { 1, 7, 999, 250_000, 1_000_000, 2_500_000, 7_000_000, 10_000_000,
			60_000_000, 3_600_000_000L };

	private TestPostgres postgres;

	private final OpenStores stores = new OpenStores();

	@AfterEach
	void closeStores() {
		this.stores.closeAll();
	}

	@BeforeEach
	void usePostgres(TestPostgres postgres) {
		this.postgres = postgres;
	}

	static Stream<Arguments> policies() {
		Random random = new Random(20261129);
		return Stream.of(Algorithm.values())
			.flatMap((algorithm) -> IntStream.range(0, 8)
				.mapToObj((i) -> Arguments.of(randomPolicy(random, algorithm, "p"), random.nextLong())));
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("policies")
	void decidesEveryRequestAsTheInMemoryStore(RateLimitPolicy policy, long seed) {
		Random random = new Random(seed);
		ManualTimeSource memoryClock = new ManualTimeSource();
		ManualTimeSource postgresClock = new ManualTimeSource();
		RateLimitStore memory = InMemoryRateLimitStore.builder().timeSource(memoryClock).build();
		RateLimitStore postgres = postgresStore(postgresClock);
		long now = 0;
		for (int i = 0; i < 200; i++) {
			now = nextTime(random, now, policy.windowMicros());
			memoryClock.set(now * 1000);
			postgresClock.set(now * 1000);
			String key = "k" + random.nextInt(3);
			Decision expected = memory.limiter(policy).decide(key);
			Decision actual = postgres.limiter(policy).decide(key);
			assertThat(actual).as("request %d at %d us, key %s", i, now, key).isEqualTo(expected);
		}
	}

	static Stream<Arguments> largeFigures() {
		return Stream.of(RateLimitPolicy.of("p", Algorithm.FIXED_WINDOW, 1L << 32, Duration.ofNanos(1000))
			.withCost(1L << 30),
				RateLimitPolicy.of("p", Algorithm.SLIDING_WINDOW_COUNTER, 65_536, Duration.ofNanos(1000)).withCost(20_000),
				RateLimitPolicy.of("p", Algorithm.GCRA, 9_973, Duration.ofSeconds(7)).withCost(7),
				RateLimitPolicy.of("p", Algorithm.TOKEN_BUCKET, 1_000_003, Duration.ofNanos(7000)).withBurst(50),
				RateLimitPolicy.of("p", Algorithm.LEAKY_BUCKET, 999_983, Duration.ofHours(1)).withBurst(20).withDelayAfter(3))
			.map(Arguments::of);
	}

	/**
	 * Large limits and costs, intervals of a fraction of a microsecond, and instants of this century rather than
	 * near the clock's zero: window indexes, counts and ticks as large as they get.
	 */
	@ParameterizedTest(name = "{0}")
	@MethodSource("largeFigures")
	void decidesLargeFiguresAtTodaysInstants(RateLimitPolicy policy) {
		long window = policy.windowMicros();
		long offset = 1_796_428_800_000_000L;
		Random random = new Random(policy.limit());
		ManualTimeSource memoryClock = new ManualTimeSource();
		ManualTimeSource postgresClock = new ManualTimeSource();
		RateLimitStore memory = InMemoryRateLimitStore.builder().timeSource(memoryClock).build();
		RateLimitStore postgres = postgresStore(postgresClock);
		long now = offset;
		for (int i = 0; i < 120; i++) {
			memoryClock.set(now * 1000);
			postgresClock.set(now * 1000);
			Decision expected = memory.limiter(policy).decide("k");
			assertThat(postgres.limiter(policy).decide("k")).as("request at %d us", now).isEqualTo(expected);
			now = nextTime(random, now, window);
		}
	}

	static Stream<Arguments> stacks() {
		Random random = new Random(7);
		return IntStream.range(0, 16).mapToObj((i) -> {
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
		ManualTimeSource postgresClock = new ManualTimeSource();
		RateLimitStore memory = InMemoryRateLimitStore.builder().timeSource(memoryClock).build();
		RateLimitStore postgres = postgresStore(postgresClock);
		long shortest = stack.stream().mapToLong(RateLimitPolicy::windowMicros).min().orElseThrow();
		long now = 0;
		for (int i = 0; i < 200; i++) {
			now = nextTime(random, now, shortest);
			memoryClock.set(now * 1000);
			postgresClock.set(now * 1000);
			String key = "k" + random.nextInt(2);
			List<RateLimitPolicy> policies = (random.nextInt(4) == 0) ? stack.subList(0, 1) : stack;
			List<Decision> expected = memory.decideAll(key, policies);
			List<Decision> actual = postgres.decideAll(key, policies);
			assertThat(actual).as("request %d at %d us, key %s", i, now, key).isEqualTo(expected);
		}
	}

	private RateLimitStore postgresStore(ManualTimeSource clock) {
		return this.stores.track(TestStores.create(this.postgres.dataSource(), "differential_state", clock));
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
