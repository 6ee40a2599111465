package dev.ratelimit.core.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.lettuce.core.KeyScanCursor;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanCursor;
import io.lettuce.core.api.sync.RedisCommands;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.Decision;
import dev.ratelimit.core.FailurePolicy;
import dev.ratelimit.core.ManualTimeSource;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.RateLimiter;
import dev.ratelimit.core.testing.FailLoudly;
import dev.ratelimit.core.testing.LettuceScriptExecutor;
import dev.ratelimit.core.testing.ManualScheduler;
import dev.ratelimit.core.testing.RedisExtension;
import dev.ratelimit.core.testing.TestRedis;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the scripts leave in Redis: keys named by the documented layout, each expiring no sooner than its
 * state returns to a new key's, small, untouched by denied requests, and scripts that survive a
 * {@code SCRIPT FLUSH}.
 */
@ExtendWith(RedisExtension.class)
class RedisKeysIT {

	private static final String RUN = Long.toString(ThreadLocalRandom.current().nextLong() >>> 1, 36);

	private static final AtomicInteger prefixes = new AtomicInteger();

	private TestRedis redis;

	private RedisCommands<String, String> commands;

	private String prefix;

	private final List<Throwable> failures = new ArrayList<>();

	@BeforeEach
	void useRedis(TestRedis redis) {
		this.redis = redis;
		this.commands = redis.commands();
		this.prefix = "keys:" + RUN + ":" + prefixes.incrementAndGet() + ":";
	}

	/** A store whose heartbeat runs only in a warm-up: these tests count what decisions write. */
	private RedisRateLimitStore.Builder store() {
		return RedisRateLimitStore.builder(this.redis.executor())
			.scheduler(new ManualScheduler(new ManualTimeSource(0)))
			.keyPrefix(this.prefix)
			.timeout(Duration.ofSeconds(10))
			.failurePolicy(FailurePolicy.DENY)
			.onFailure((policies, cause) -> this.failures.add(cause));
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void expiresEveryKeyNoSoonerThanItsResetAfter(Algorithm algorithm) {
		RateLimiter limiter = store().build().limiter(RateLimitPolicy.of("api", algorithm, 3, Duration.ofSeconds(20)));
		for (int i = 0; i < 5; i++) {
			long before = redisMicros();
			Decision decision = limiter.decide("client");
			String key = this.prefix + "{client}:api";
			long expiresAtMillis = this.commands.pexpiretime(key);
			assertThat(this.commands.pttl(key)).isPositive();
			// the key outlives its state, measured from a Redis instant before the script ran
			assertThat(expiresAtMillis * 1000).isGreaterThanOrEqualTo(before + decision.resetAfterNanos() / 1000);
		}
		assertThat(keysUnderPrefix()).containsExactly(this.prefix + "{client}:api");
		assertThat(this.failures).isEmpty();
	}

	@Test
	void givesEveryStackedKeyAnExpiry() {
		List<RateLimitPolicy> stack = new ArrayList<>();
		for (Algorithm algorithm : Algorithm.values()) {
			stack.add(RateLimitPolicy.of(algorithm.name().toLowerCase(), algorithm, 5, Duration.ofMinutes(1)));
		}
		store().build().decideAll("client", stack);
		List<String> keys = keysUnderPrefix();
		assertThat(keys).hasSize(6);
		for (String key : keys) {
			assertThat(this.commands.pttl(key)).as(key).isPositive();
		}
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void writesNothingForADeniedRequest(Algorithm algorithm) {
		ManualTimeSource clock = new ManualTimeSource(Duration.ofHours(1).toNanos());
		RateLimiter limiter = store().timeSource(clock)
			.build()
			.limiter(RateLimitPolicy.of("api", algorithm, 2, Duration.ofMinutes(1)));
		while (limiter.decide("client").allowed()) {
			clock.advance(Duration.ofMillis(1));
		}
		String key = this.prefix + "{client}:api";
		byte[] state = this.commands.dump(key);
		long expiresAt = this.commands.pexpiretime(key);
		long writes = writes();
		clock.advance(Duration.ofMillis(1));
		assertThat(limiter.decide("client").allowed()).isFalse();
		assertThat(writes()).as("writes by a denied request").isEqualTo(writes);
		assertThat(this.commands.dump(key)).isEqualTo(state);
		assertThat(this.commands.pexpiretime(key)).isEqualTo(expiresAt);
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void keepsEachKeySmall(Algorithm algorithm) {
		// measured under the default prefix, for a client address as long as most
		RateLimitPolicy policy = RateLimitPolicy.of("api", algorithm, 3, Duration.ofSeconds(10));
		RateLimiter limiter = store().keyPrefix("ratelimit:").build().limiter(policy);
		String client = "198.51.100." + (100 + ThreadLocalRandom.current().nextInt(100));
		String key = "ratelimit:{" + client + "}:api";
		try {
			limiter.decide(client);
			limiter.decide(client);
			long bytes = this.commands.memoryUsage(key);
			long budget = (algorithm == Algorithm.SLIDING_LOG) ? 300 : 140;
			assertThat(bytes).as("bytes of the %s of %s", this.commands.type(key), algorithm)
				.isLessThanOrEqualTo(budget);
		}
		finally {
			this.commands.del(key);
		}
	}

	@ParameterizedTest
	@EnumSource(names = { "FIXED_WINDOW", "SLIDING_WINDOW_COUNTER" })
	void keepsWindowCountsAsAnIntegerUnlessTheLimitIsTooLargeToPack(Algorithm algorithm) {
		RedisRateLimitStore store = store().build();
		long largest = (algorithm == Algorithm.FIXED_WINDOW) ? (1L << 32) - 1 : 65_535;
		store.limiter(RateLimitPolicy.of("packed", algorithm, largest, Duration.ofSeconds(10))).decide("client");
		store.limiter(RateLimitPolicy.of("string", algorithm, largest + 1, Duration.ofSeconds(10))).decide("client");
		assertThat(this.commands.objectEncoding(this.prefix + "{client}:packed")).isEqualTo("int");
		assertThat(this.commands.objectEncoding(this.prefix + "{client}:string")).isEqualTo("embstr");
	}

	@Test
	void keepsTheSlidingLogNoLongerThanTheLimit() {
		ManualTimeSource clock = new ManualTimeSource();
		RateLimiter limiter = store().timeSource(clock)
			.build()
			.limiter(RateLimitPolicy.of("api", Algorithm.SLIDING_LOG, 5, Duration.ofSeconds(1)));
		for (int i = 0; i < 200; i++) {
			limiter.decide("client");
			clock.advance(Duration.ofMillis(37));
			assertThat(this.commands.llen(this.prefix + "{client}:api")).isLessThanOrEqualTo(5);
		}
	}

	@Test
	void keepsTheHashTagIntactWhateverTheClientKey() {
		RedisRateLimitStore store = store().build();
		RateLimitPolicy policy = RateLimitPolicy.of("api", Algorithm.TOKEN_BUCKET, 3, Duration.ofSeconds(10));
		for (String client : List.of("", "}", "{", "a}b{c", "%7B", "%", "user:{42}")) {
			store.limiter(policy).decide(client);
		}
		assertThat(keysUnderPrefix()).containsExactlyInAnyOrder(this.prefix + "{%}:api", this.prefix + "{%7D}:api",
				this.prefix + "{%7B}:api", this.prefix + "{a%7Db%7Bc}:api", this.prefix + "{%257B}:api",
				this.prefix + "{%25}:api", this.prefix + "{user:%7B42%7D}:api");
	}

	@Test
	void replacesTheStateOfAPolicyWhoseAlgorithmChanged() {
		RedisRateLimitStore store = store().build();
		for (Algorithm algorithm : Algorithm.values()) {
			Decision decision = store.limiter(RateLimitPolicy.of("api", algorithm, 3, Duration.ofSeconds(10)))
				.decide("client");
			assertThat(decision.allowed()).as(algorithm.name()).isTrue();
		}
		assertThat(this.failures).isEmpty();
	}

	@Test
	void reloadsItsScriptsAfterAScriptFlush() {
		// a client of its own: other stores' heartbeats on the shared one would find NOSCRIPT too
		try (LettuceScriptExecutor executor = LettuceScriptExecutor.standalone(this.redis.uri())) {
			RateLimiter limiter = RedisRateLimitStore.builder(executor)
				.scheduler(new ManualScheduler(new ManualTimeSource(0)))
				.keyPrefix(this.prefix)
				.timeout(Duration.ofSeconds(10))
				.onFailure(FailLoudly.ON_REDIS_FAILURE)
				.build()
				.limiter(RateLimitPolicy.of("api", Algorithm.SLIDING_WINDOW_COUNTER, 100, Duration.ofMinutes(1)));
			int allowed = 0;
			for (int i = 0; i < 10; i++) {
				this.commands.scriptFlush();
				allowed += limiter.decide("client").allowed() ? 1 : 0;
			}
			assertThat(allowed).isEqualTo(10);
			assertThat(executor.noScriptFallbacks()).isEqualTo(10);
		}
	}

	@Test
	void warmsUpTheScriptsOfEveryEndpointWithoutTouchingAClient() throws Exception {
		RateLimitPolicy gcra = RateLimitPolicy.of("api", Algorithm.GCRA, 3, Duration.ofSeconds(10));
		RateLimitPolicy window = RateLimitPolicy.of("window", Algorithm.FIXED_WINDOW, 3, Duration.ofSeconds(10));
		RateLimitPolicy log = RateLimitPolicy.of("log", Algorithm.SLIDING_LOG, 3, Duration.ofSeconds(10));
		RedisRateLimitStore store = store().build();
		this.commands.scriptFlush();
		store.warmUp()
			.orElseThrow()
			.warmUp(List.of(List.of(gcra), List.of(window, log)))
			.toCompletableFuture()
			.get(10, TimeUnit.SECONDS);
		assertThat(this.commands.scriptExists(RedisScripts.get().standalone(Algorithm.GCRA).sha1(),
				RedisScripts.get().stacked().sha1(), RedisScripts.get().standalone(Algorithm.FIXED_WINDOW).sha1()))
			.containsExactly(true, true, false);
		assertThat(keysUnderPrefix()).isNotEmpty()
			.allSatisfy((key) -> assertThat(key).startsWith(this.prefix + "{%warm-up}:"));
		// the warm-up's heartbeat made this instance a member of the fleet, for three seconds
		assertThat(this.commands.zcard(this.prefix + "{%fleet}:members")).isEqualTo(1);
		assertThat(this.commands.pttl(this.prefix + "{%fleet}:members")).isBetween(1L, 3000L);
		assertThat(store.limiter(gcra).decide("client").remaining()).isEqualTo(2);
		assertThat(this.failures).isEmpty();
	}

	/** The keys of clients' state: every key under the prefix but the fleet's members. */
	private List<String> keysUnderPrefix() {
		List<String> keys = new ArrayList<>();
		ScanArgs match = ScanArgs.Builder.matches(this.prefix.replace("[", "\\[") + "*").limit(1000);
		KeyScanCursor<String> cursor = this.commands.scan(match);
		keys.addAll(cursor.getKeys());
		while (!cursor.isFinished()) {
			cursor = this.commands.scan(ScanCursor.of(cursor.getCursor()), match);
			keys.addAll(cursor.getKeys());
		}
		keys.remove(this.prefix + "{%fleet}:members");
		return keys;
	}

	private long redisMicros() {
		List<String> time = this.commands.time();
		return Long.parseLong(time.get(0)) * 1_000_000 + Long.parseLong(time.get(1));
	}

	/** Redis' count of changes to the data set, which every write moves. */
	private long writes() {
		String persistence = this.commands.info("persistence");
		for (String line : persistence.split("\r\n")) {
			if (line.startsWith("rdb_changes_since_last_save:")) {
				return Long.parseLong(line.substring(line.indexOf(':') + 1).trim());
			}
		}
		throw new IllegalStateException("No rdb_changes_since_last_save in " + persistence);
	}

}
