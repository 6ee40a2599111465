package dev.ratelimit.core.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import java.util.stream.Stream;

import io.lettuce.core.api.sync.RedisCommands;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.Decision;
import dev.ratelimit.core.FailurePolicy;
import dev.ratelimit.core.ManualTimeSource;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.RateLimitStore;
import dev.ratelimit.core.RateLimiter;
import dev.ratelimit.core.testing.FailLoudly;
import dev.ratelimit.core.testing.OpenStores;
import dev.ratelimit.core.testing.RedisExtension;
import dev.ratelimit.core.testing.TestRedis;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Redis' clock stepping back an hour, as after a failover to a replica whose clock is behind, and forward an
 * hour: state written at one instant is read by a store whose clock stands an hour earlier or later. A
 * backward step holds a client at most one window, forgets none of what it used, and every retry-after
 * reported on the way is a wait after which the same request passes; a forward step finds the client as
 * a new key.
 */
@ExtendWith(RedisExtension.class)
class RedisClockStepIT {

	private final OpenStores open = new OpenStores();

	private static final String RUN = Long.toString(ThreadLocalRandom.current().nextLong() >>> 1, 36);

	private static final AtomicInteger prefixes = new AtomicInteger();

	/** 1.5 s into a 10 s window, and far enough from zero that an hour earlier is still positive. */
	private static final long WRITTEN_AT = Duration.ofDays(1000).plusMillis(1500).toNanos();

	private static final long HOUR = Duration.ofHours(1).toNanos();

	/** The window index modulo this is what the packed window states keep. */
	private static final long PACK = 1L << 21;

	private static final Duration WINDOW = Duration.ofSeconds(10);

	private TestRedis redis;

	private RedisCommands<String, String> commands;

	private String prefix;

	@BeforeEach
	void useRedis(TestRedis redis) {
		this.redis = redis;
		this.commands = redis.commands();
		this.prefix = "clock-step:" + RUN + ":" + prefixes.incrementAndGet() + ":";
	}

	static Stream<RateLimitPolicy> policies() {
		List<RateLimitPolicy> policies = new ArrayList<>();
		for (Algorithm algorithm : Algorithm.values()) {
			policies.add(RateLimitPolicy.of("api", algorithm, 5, WINDOW));
		}
		// an interval of 3,333,333.33 µs: the bucket instant is written with ticks
		policies.add(RateLimitPolicy.of("api", Algorithm.GCRA, 3, WINDOW));
		policies.add(RateLimitPolicy.of("api", Algorithm.TOKEN_BUCKET, 5, WINDOW).withBurst(8).withCost(2));
		policies.add(RateLimitPolicy.of("api", Algorithm.LEAKY_BUCKET, 5, WINDOW).withBurst(3).withDelayAfter(1));
		// too large to pack: the window states are kept as text
		policies.add(RateLimitPolicy.of("api", Algorithm.FIXED_WINDOW, 1L << 32, WINDOW).withCost(1L << 31));
		policies.add(RateLimitPolicy.of("api", Algorithm.SLIDING_WINDOW_COUNTER, 70_000, WINDOW).withCost(70_000));
		return policies.stream();
	}

	@AfterEach
	void closeStores() {
		this.open.closeAll();
	}
	@ParameterizedTest(name = "{0}")
	@MethodSource("policies")
	void holdsAClientAtMostOneWindowAfterRedisStepsBackAnHour(RateLimitPolicy policy) {
		RateLimiter before = store(new ManualTimeSource(WRITTEN_AT)).limiter(policy);
		exhaust(() -> before.decide("client"));
		ManualTimeSource clock = new ManualTimeSource(WRITTEN_AT - HOUR);
		RateLimiter after = store(clock).limiter(policy);
		String key = key(policy);
		assertThat(beyondReach(policy, key, clock)).as("µs the state lies beyond what %s can write now", policy)
			.isPositive();

		long stepped = clock.nanoTime();
		Steps steps = exhaust(() -> after.decide("client"));
		assertThat(beyondReach(policy, key, clock)).as("µs beyond reach after the step").isNotPositive();
		assertThat(steps.allowed()).as("allowed at once after the step, against a new key's")
			.isLessThan(exhaust(() -> after.decide("new client")).allowed());
		waitOut(clock, steps.denial());
		assertThat(after.decide("client").allowed()).as("allowed after the retry-after").isTrue();
		assertThat(clock.nanoTime() - stepped).as("held after the step").isLessThanOrEqualTo(WINDOW.toNanos());

		for (int round = 0; round < 3; round++) {
			Decision denial = exhaust(() -> after.decide("client")).denial();
			waitOut(clock, denial);
			assertThat(after.decide("client").allowed()).as("allowed after retry-after %d", round).isTrue();
		}
	}

	@Test
	void holdsAStackAtMostOneWindowAfterRedisStepsBackAnHour() {
		List<RateLimitPolicy> stack = new ArrayList<>();
		for (Algorithm algorithm : Algorithm.values()) {
			stack.add(RateLimitPolicy.of(algorithm.name().toLowerCase(), algorithm, 5, WINDOW));
		}
		RateLimitStore before = store(new ManualTimeSource(WRITTEN_AT));
		exhaustStack(() -> before.decideAll("client", stack));
		ManualTimeSource clock = new ManualTimeSource(WRITTEN_AT - HOUR);
		RateLimitStore after = store(clock);
		for (RateLimitPolicy policy : stack) {
			assertThat(beyondReach(policy, key(policy), clock)).as("µs beyond reach of %s", policy).isPositive();
		}

		long stepped = clock.nanoTime();
		List<Decision> first = after.decideAll("client", stack);
		assertThat(first).extracting(Decision::allowed).doesNotContain(true);
		for (RateLimitPolicy policy : stack) {
			assertThat(beyondReach(policy, key(policy), clock)).as("µs beyond reach of %s after the step", policy)
				.isNotPositive();
		}
		waitOut(clock, longestWait(first));
		assertThat(after.decideAll("client", stack)).extracting(Decision::allowed).containsOnly(true);
		assertThat(clock.nanoTime() - stepped).as("held after the step").isLessThanOrEqualTo(WINDOW.toNanos());

		for (int round = 0; round < 3; round++) {
			List<Decision> denial = exhaustStack(() -> after.decideAll("client", stack));
			waitOut(clock, longestWait(denial));
			assertThat(after.decideAll("client", stack)).as("after retry-after %d", round)
				.extracting(Decision::allowed)
				.containsOnly(true);
		}
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("policies")
	void findsAClientAsANewKeyAfterRedisStepsForwardAnHour(RateLimitPolicy policy) {
		RateLimiter before = store(new ManualTimeSource(WRITTEN_AT)).limiter(policy);
		exhaust(() -> before.decide("client"));
		RateLimiter after = store(new ManualTimeSource(WRITTEN_AT + HOUR)).limiter(policy);
		assertThat(after.decide("client")).isEqualTo(after.decide("new client"));
	}

	private RedisRateLimitStore store(ManualTimeSource clock) {
		return this.open.track(RedisRateLimitStore.builder(this.redis.executor())
			.keyPrefix(this.prefix)
			.timeSource(clock)
			.timeout(Duration.ofSeconds(10))
			.failurePolicy(FailurePolicy.DENY)
			.onFailure(FailLoudly.ON_REDIS_FAILURE)
			.build());
	}

	private String key(RateLimitPolicy policy) {
		return this.prefix + "{client}:" + policy.name();
	}

	/** Requests at one instant until one is denied: how many passed, and the denial. */
	private static Steps exhaust(Supplier<Decision> request) {
		for (int allowed = 0; allowed < 20; allowed++) {
			Decision decision = request.get();
			if (!decision.allowed()) {
				return new Steps(allowed, decision);
			}
		}
		throw new AssertionError("20 requests at one instant and none denied");
	}

	private static List<Decision> exhaustStack(Supplier<List<Decision>> request) {
		for (int i = 0; i < 20; i++) {
			List<Decision> decisions = request.get();
			if (!decisions.get(0).allowed()) {
				return decisions;
			}
		}
		throw new AssertionError("20 stacked requests at one instant and none denied");
	}

	private static Decision longestWait(List<Decision> decisions) {
		return decisions.stream().max(Comparator.comparingLong(Decision::retryAfterNanos)).orElseThrow();
	}

	/** Waits as a client does; the stores read the clock in whole microseconds, so a wait ends on one. */
	private static void waitOut(ManualTimeSource clock, Decision denial) {
		assertThat(denial.allowed()).isFalse();
		assertThat(denial.retryAfterNanos()).as("retry-after").isPositive().isLessThanOrEqualTo(WINDOW.toNanos());
		long micros = -Math.floorDiv(-denial.retryAfterNanos(), 1000);
		clock.advance(Duration.ofNanos(micros * 1000));
	}

	/**
	 * How far, in microseconds, the key's state lies beyond the latest one the algorithm can leave at the
	 * clock's instant: the bucket's instant after now plus its capacity, a log entry after now, a window
	 * after the current one. Positive only for a state that no clock running forward writes.
	 */
	private long beyondReach(RateLimitPolicy policy, String key, ManualTimeSource clock) {
		long now = Math.floorDiv(clock.nanoTime(), 1000);
		long window = policy.windowMicros();
		return switch (policy.algorithm()) {
			case TOKEN_BUCKET, GCRA -> instant(key) - (now + ceilDiv(policy.burst() * window, policy.limit()));
			case LEAKY_BUCKET -> instant(key) - (now + ceilDiv((policy.burst() + 1) * window, policy.limit()));
			case SLIDING_LOG -> Long.parseLong(this.commands.lindex(key, -1)) - now;
			case FIXED_WINDOW, SLIDING_WINDOW_COUNTER -> (windowIndex(key, Math.floorDiv(now, window))
					- Math.floorDiv(now, window)) * window;
		};
	}

	/** The whole microseconds of a bucket's {@code <µs>} or {@code <µs>:<ticks>}. */
	private long instant(String key) {
		String value = this.commands.get(key);
		return Long.parseLong(value.split(":")[0]);
	}

	/** The window index of a window state, taking a packed index modulo 2^21 as the one nearest current. */
	private long windowIndex(String key, long current) {
		String value = this.commands.get(key);
		if (value.contains(":")) {
			return Long.parseLong(value.split(":")[0]);
		}
		long offset = Math.floorMod(Long.parseLong(value) - current, PACK);
		return current + ((offset >= PACK / 2) ? offset - PACK : offset);
	}

	private static long ceilDiv(long dividend, long divisor) {
		return -Math.floorDiv(-dividend, divisor);
	}

	private record Steps(int allowed, Decision denial) {
	}

}
