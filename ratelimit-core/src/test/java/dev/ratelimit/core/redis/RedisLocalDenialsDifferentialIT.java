package dev.ratelimit.core.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiFunction;
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
import dev.ratelimit.core.testing.FailLoudly;
import dev.ratelimit.core.testing.OpenStores;
import dev.ratelimit.core.testing.RedisExtension;
import dev.ratelimit.core.testing.TestRedis;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Random traces of a fleet of instances on one Redis, run twice, by a fleet that denies locally what Redis has
 * denied and by one that asks Redis every time: every decision must be the same, field by field, for single
 * and stacked policies of every algorithm, across resets of keys.
 */
@ExtendWith(RedisExtension.class)
class RedisLocalDenialsDifferentialIT {

	private static final String RUN = Long.toString(ThreadLocalRandom.current().nextLong() >>> 1, 36);

	private static final int INSTANCES = 3;

	private static final AtomicInteger fleets = new AtomicInteger();

	private TestRedis redis;

	private final OpenStores open = new OpenStores();

	@BeforeEach
	void useRedis(TestRedis redis) {
		this.redis = redis;
	}

	@AfterEach
	void closeStores() {
		this.open.closeAll();
	}

	/** Three policies of the algorithm under test and one of another, decided alone and stacked. */
	static Stream<Arguments> traces() {
		Random random = new Random(20261201);
		return Stream.of(Algorithm.values()).flatMap((algorithm) -> IntStream.range(0, 4).mapToObj((i) -> {
			List<RateLimitPolicy> policies = new ArrayList<>();
			for (int p = 0; p < 3; p++) {
				policies.add(RedisStoreDifferentialIT.randomPolicy(random, algorithm, algorithm.name() + p));
			}
			Algorithm other = Algorithm.values()[random.nextInt(Algorithm.values().length)];
			policies.add(RedisStoreDifferentialIT.randomPolicy(random, other, "other"));
			return Arguments.of(policies, random.nextLong());
		}));
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("traces")
	void decidesEveryRequestAsAFleetThatAsksRedisEveryTime(List<RateLimitPolicy> policies, long seed) {
		decideAsAFleetThatAsksRedisEveryTime(policies, seed, (random, stack) -> stack);
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("traces")
	void decidesRequestsOfMixedCostsAsAFleetThatAsksRedisEveryTime(List<RateLimitPolicy> policies, long seed) {
		decideAsAFleetThatAsksRedisEveryTime(policies, seed, (random, stack) -> stack.stream()
			.map((policy) -> policy.withCost(1 + random.nextInt((int) Math.min(policy.capacity(), 4))))
			.toList());
	}

	private void decideAsAFleetThatAsksRedisEveryTime(List<RateLimitPolicy> policies, long seed,
			BiFunction<Random, List<RateLimitPolicy>, List<RateLimitPolicy>> costs) {
		Random random = new Random(seed);
		List<List<RateLimitPolicy>> stacks = new ArrayList<>();
		policies.forEach((policy) -> stacks.add(List.of(policy)));
		stacks.add(List.of(policies.get(0), policies.get(1)));
		stacks.add(List.of(policies.get(2), policies.get(3), policies.get(0)));
		ManualTimeSource clock = new ManualTimeSource();
		CountingExecutor localCalls = new CountingExecutor(this.redis.executor());
		CountingExecutor redisCalls = new CountingExecutor(this.redis.executor());
		String localPrefix = prefix();
		String redisPrefix = prefix();
		List<RedisRateLimitStore> local = fleet(localCalls, localPrefix, clock, true);
		List<RedisRateLimitStore> redis = fleet(redisCalls, redisPrefix, clock, false);
		long shortest = policies.stream().mapToLong(RateLimitPolicy::windowMicros).min().orElseThrow();
		long now = 0;
		int requests = 600;
		for (int i = 0; i < requests; i++) {
			now = RedisStoreDifferentialIT.nextTime(random, now, shortest);
			// the nanoseconds below the microsecond that the scripts read must not count
			clock.set(Math.max(clock.nanoTime(), now * 1000 + random.nextInt(1000)));
			String key = "k" + random.nextInt(2);
			if (random.nextInt(100) == 0) {
				reset(key, policies, localPrefix, local);
				reset(key, policies, redisPrefix, redis);
				continue;
			}
			int instance = random.nextInt(INSTANCES);
			List<RateLimitPolicy> stack = costs.apply(random, stacks.get(random.nextInt(stacks.size())));
			List<Decision> expected = redis.get(instance).decideAll(key, stack);
			List<Decision> actual = local.get(instance).decideAll(key, stack);
			assertThat(actual).as("request %d at %d us on instance %d, key %s, %s", i, now, instance, key, stack)
				.isEqualTo(expected);
		}
		// only denials of one permit are kept, which a trace of larger costs may never see
		assertThat(localCalls.calls()).as("calls with local denials, of %d requests", requests)
			.isLessThanOrEqualTo(redisCalls.calls());
	}

	/**
	 * A key's reset: its state deleted from Redis, and its local denials forgotten by every instance at once,
	 * as their next heartbeats would.
	 */
	private void reset(String key, List<RateLimitPolicy> policies, String prefix, List<RedisRateLimitStore> fleet) {
		policies.forEach((policy) -> fleet.get(0).reset(key, policy));
		fleet.forEach((store) -> store.receive("reset:" + key));
	}

	private static String prefix() {
		return "local-denials:" + RUN + ":" + fleets.incrementAndGet() + ":";
	}

	private List<RedisRateLimitStore> fleet(RedisScriptExecutor executor, String prefix, ManualTimeSource clock,
			boolean localDenials) {
		List<RedisRateLimitStore> fleet = new ArrayList<>();
		for (int i = 0; i < INSTANCES; i++) {
			fleet.add(this.open.track(RedisRateLimitStore.builder(executor)
				.keyPrefix(prefix)
				.timeSource(clock)
				.localDenials(localDenials)
				.timeout(Duration.ofSeconds(10))
				.failurePolicy(FailurePolicy.DENY)
				.onFailure(FailLoudly.ON_REDIS_FAILURE)
				.build()));
		}
		return fleet;
	}

}
