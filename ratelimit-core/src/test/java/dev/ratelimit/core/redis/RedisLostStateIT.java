package dev.ratelimit.core.redis;

import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.Decision;
import dev.ratelimit.core.KeyedPolicy;
import dev.ratelimit.core.ManualTimeSource;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.testing.LogRecorder;
import dev.ratelimit.core.testing.RedisExtension;
import dev.ratelimit.core.testing.TestRedis;
import io.lettuce.core.api.sync.RedisCommands;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A state that Redis loses while the instances still count on it (an empty restart, a flush, an eviction, a
 * failover to a replica that missed it) is restored from what they last heard before Redis decides on it: the
 * client keeps the permits it had left, not a fresh quota, and the store says so at WARN.
 */
@ExtendWith(RedisExtension.class)
class RedisLostStateIT {

	private static final long LIMIT = 100;

	private final String prefix = "lost-" + UUID.randomUUID() + ":";

	private final ManualTimeSource clock = new ManualTimeSource(1_000_000_000_000L);

	private TestRedis redis;

	private RedisCommands<String, String> commands;

	@BeforeEach
	void useRedis(TestRedis redis) {
		this.redis = redis;
		this.commands = redis.commands();
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void aLostStateIsRestoredFromWhatTheInstanceLastHeard(Algorithm algorithm) {
		RateLimitPolicy policy = RateLimitPolicy.of("api", algorithm, LIMIT, Duration.ofHours(1));
		try (RedisRateLimitStore store = store(); LogRecorder log = LogRecorder.record(
				RedisRateLimitStore.class.getName())) {
			long left = take(store, policy, 40);
			forget();
			Decision after = store.limiter(policy).decide("client");
			assertThat(after.allowed()).isTrue();
			assertThat(after.remaining()).as("permits left after Redis lost the state").isEqualTo(left - 1);
			awaitLine(log);
			assertThat(log.messages()).anySatisfy((line) -> assertThat(line).contains("had lost the state of 1"));
		}
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void aStackRestoresEachOfItsLostStates(Algorithm algorithm) {
		RateLimitPolicy perHour = RateLimitPolicy.of("hour", algorithm, LIMIT, Duration.ofHours(1));
		RateLimitPolicy perDay = RateLimitPolicy.of("day", algorithm, 10 * LIMIT, Duration.ofDays(1));
		List<KeyedPolicy> stack = List.of(new KeyedPolicy("client", perHour), new KeyedPolicy("client", perDay));
		try (RedisRateLimitStore store = store()) {
			List<Decision> before = List.of();
			for (int i = 0; i < 20; i++) {
				before = store.decideAll(stack);
				assertThat(before).allMatch(Decision::allowed);
			}
			forget();
			List<Decision> after = store.decideAll(stack);
			assertThat(after).extracting(Decision::remaining)
				.containsExactly(before.get(0).remaining() - 1, before.get(1).remaining() - 1);
		}
	}

	private RedisRateLimitStore store() {
		return RedisRateLimitStore.builder(this.redis.executor()).keyPrefix(this.prefix).timeSource(this.clock).build();
	}

	/** Takes {@code requests} permits, all allowed, and returns the permits left as Redis last said. */
	private static long take(RedisRateLimitStore store, RateLimitPolicy policy, int requests) {
		Decision last = null;
		for (int i = 0; i < requests; i++) {
			last = store.limiter(policy).decide("client");
			assertThat(last.allowed()).isTrue();
		}
		return last.remaining();
	}

	/** Deletes every state of the test's stores, as a flush, an empty restart or an eviction does. */
	private void forget() {
		List<String> keys = this.commands.keys(this.prefix + "*");
		assertThat(keys).isNotEmpty();
		this.commands.del(keys.toArray(String[]::new));
	}

	/** The log is written off the request thread. */
	private static void awaitLine(LogRecorder log) {
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
		while (log.lines(System.Logger.Level.WARNING) == 0 && System.nanoTime() - deadline < 0) {
			Thread.onSpinWait();
		}
	}

}
