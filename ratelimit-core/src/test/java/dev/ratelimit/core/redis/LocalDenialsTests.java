package dev.ratelimit.core.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;

import org.junit.jupiter.api.Test;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.Decision;
import dev.ratelimit.core.FailurePolicy;
import dev.ratelimit.core.ManualTimeSource;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.redis.RedisRateLimitStoreTests.Call;
import dev.ratelimit.core.redis.RedisRateLimitStoreTests.StubExecutor;
import dev.ratelimit.core.testing.ManualScheduler;

import static org.assertj.core.api.Assertions.assertThat;

class LocalDenialsTests {

	private static final RateLimitPolicy GCRA = RateLimitPolicy.of("api", Algorithm.GCRA, 3, Duration.ofSeconds(10));

	private static final RateLimitPolicy HOURLY = RateLimitPolicy.of("hourly", Algorithm.FIXED_WINDOW, 100,
			Duration.ofHours(1));

	private static final RateLimitPolicy LEAKY = RateLimitPolicy.of("smooth", Algorithm.LEAKY_BUCKET, 2,
			Duration.ofSeconds(1))
		.withBurst(5);

	/** Redis' denial: no permit left, 2.5 s to wait (written 2_500_000 us less 0 ns), 9 s to full. */
	private static final List<Long> DENIED = List.of(0L, 0L, 2_500_000L, 9_000_000L, 0L, 0L, 0L, 0L, 0L);

	private final ManualTimeSource ticker = new ManualTimeSource(1_000_000_000L);

	@Test
	void deniesAgainWithoutACallUntilTheRetryAfterCountedFromWhenTheCallWasSent() {
		// the round trip takes 40 ms, which the local denial must not add to Redis' retry-after
		StubExecutor redis = redis((call) -> {
			this.ticker.advance(Duration.ofMillis(40));
			return reply(DENIED);
		});
		RedisRateLimitStore store = builder(redis).build();
		store.limiter(GCRA).decide("k");
		this.ticker.advance(Duration.ofMillis(1000));
		assertThat(store.limiter(GCRA).decide("k"))
			.isEqualTo(new Decision(false, 3, 0, 1_460_000_000L, 7_960_000_000L, 0));
		this.ticker.advance(Duration.ofMillis(1459));
		assertThat(store.limiter(GCRA).decide("k").retryAfterNanos()).isEqualTo(1_000_000);
		assertThat(redis.calls).hasSize(1);
		this.ticker.advance(Duration.ofMillis(1));
		store.limiter(GCRA).decide("k");
		assertThat(redis.calls).hasSize(2);
	}

	/**
	 * A request that reserved permits past what was left pushed the key's refusals on: the denial kept for the
	 * key would tell too short a wait, and is forgotten. A leaky bucket's delay is a slot in its queue, as every
	 * request of it has, and forgets nothing.
	 */
	@Test
	void forgetsAKeysDenialsOnlyWhenARequestReservedPermits() {
		List<Long> held = List.of(1L, 2L, 0L, 1_000_000L, 500_000L, 0L, 0L, 0L, 0L);
		StubExecutor redis = redis((call) -> reply(
				call.sha1().equals(RedisScripts.get().standalone(Algorithm.GCRA).sha1()) ? DENIED : held));
		RedisRateLimitStore store = builder(redis).build();
		store.limiter(GCRA).decide("k");
		store.limiter(LEAKY).decide("k");
		store.limiter(GCRA).decide("k");
		assertThat(redis.calls).as("the denial kept through the leaky bucket's held request").hasSize(2);
		RateLimitPolicy waiting = RateLimitPolicy.of("waiting", Algorithm.TOKEN_BUCKET, 3, Duration.ofSeconds(10))
			.withMaxWait(Duration.ofSeconds(1));
		store.limiter(waiting).decide("k");
		store.limiter(GCRA).decide("k");
		assertThat(redis.calls).as("asked again after a reservation").hasSize(4);
	}

	@Test
	void keepsOneDenialPerKeyAndPolicy() {
		StubExecutor redis = redis((call) -> reply(DENIED));
		RedisRateLimitStore store = builder(redis).build();
		RateLimitPolicy other = RateLimitPolicy.of("other", Algorithm.GCRA, 3, Duration.ofSeconds(10));
		store.limiter(GCRA).decide("k");
		store.limiter(GCRA).decide("k");
		store.limiter(GCRA).decide("k2");
		store.limiter(other).decide("k");
		store.limiter(GCRA).decide("k2");
		store.limiter(other).decide("k");
		assertThat(redis.calls).extracting(Call::keys)
			.containsExactly(List.of("ratelimit:{k}:api"), List.of("ratelimit:{k2}:api"),
					List.of("ratelimit:{k}:other"));
	}

	@Test
	void measuresTimeOnTheTimeSourceInTheMicrosecondsThatTheScriptReads() {
		// read by each request once: a request that read it before the denial's call was sent may come later
		AtomicLong clock = new AtomicLong(5_000_999);
		StubExecutor redis = redis((call) -> reply(DENIED));
		RedisRateLimitStore store = builder(redis).timeSource(clock::get).build();
		store.limiter(GCRA).decide("k");
		// 7 us and 998 ns later, but the script would read a now 8 us later
		clock.set(5_008_997);
		assertThat(store.limiter(GCRA).decide("k").retryAfterNanos()).isEqualTo(2_500_000_000L - 8_000);
		clock.set(4_999_999);
		store.limiter(GCRA).decide("k");
		assertThat(redis.calls).as("an instant before the denial's call asks Redis").hasSize(2);
	}

	@Test
	void keepsNoDenialThatMayChangeBeforeItsRetryAfter() {
		RateLimitPolicy costly = GCRA.withCost(3);
		// no permit left: one comes back before the three the request needs, and Redis would say so
		StubExecutor redis = redis((call) -> reply(DENIED));
		RedisRateLimitStore store = builder(redis).build();
		store.limiter(costly).decide("k");
		store.limiter(costly).decide("k");
		assertThat(redis.calls).hasSize(2);
		// two permits left, which a request of a smaller cost of the same policy may take meanwhile
		StubExecutor twoLeft = redis((call) -> reply(List.of(0L, 2L, 2_500_000L, 9_000_000L, 0L, 0L, 0L, 0L, 0L)));
		RedisRateLimitStore asked = builder(twoLeft).build();
		asked.limiter(costly).decide("k");
		asked.limiter(costly).decide("k");
		assertThat(twoLeft.calls).hasSize(2);
	}

	@Test
	void neverKeepsAnAdmissionEvenOneThatMustWaitForItsSlot() {
		StubExecutor redis = redis((call) -> reply(List.of(1L, 0L, 0L, 3_000_000L, 2_500_000L, 0L, 0L, 0L, 0L)));
		RedisRateLimitStore store = builder(redis).build();
		store.limiter(LEAKY).decide("k");
		assertThat(store.limiter(LEAKY).decide("k").delayNanos()).isEqualTo(2_500_000_000L);
		assertThat(redis.calls).hasSize(2);
	}

	@Test
	void neverKeepsADenialOfTheFailurePolicy() {
		StubExecutor redis = redis((call) -> CompletableFuture.failedFuture(new IllegalStateException("down")));
		RedisRateLimitStore store = builder(redis).failurePolicy(FailurePolicy.DENY).build();
		assertThat(store.limiter(GCRA).decide("k").allowed()).isFalse();
		store.limiter(GCRA).decide("k");
		assertThat(redis.calls).hasSize(2);
	}

	@Test
	void keepsAStackOnlyWhileEveryPolicyInItDeniesByItself() {
		List<Long> hourlyFull = List.of(0L, 0L, 600_000_000L, 600_000_000L, 0L, 0L, 0L, 0L, 0L);
		List<Long> hourlyOpen = List.of(0L, 40L, 0L, 600_000_000L, 0L, 0L, 0L, 0L, 0L);
		AtomicReference<List<Long>> hourly = new AtomicReference<>(hourlyOpen);
		StubExecutor redis = redis((call) -> reply(concat(DENIED, hourly.get())));
		RedisRateLimitStore store = builder(redis).build();
		store.decideAll("k", List.of(GCRA, HOURLY));
		store.decideAll("k", List.of(GCRA, HOURLY));
		assertThat(redis.calls).as("the hourly limit's remaining permits may change meanwhile").hasSize(2);
		hourly.set(hourlyFull);
		store.decideAll("k", List.of(GCRA, HOURLY));
		this.ticker.advance(Duration.ofMillis(2499));
		assertThat(store.decideAll("k", List.of(GCRA, HOURLY))).containsExactly(
				new Decision(false, 3, 0, 1_000_000, 6_501_000_000L, 0),
				new Decision(false, 100, 0, 597_501_000_000L, 597_501_000_000L, 0));
		assertThat(redis.calls).hasSize(3);
		this.ticker.advance(Duration.ofMillis(1));
		store.decideAll("k", List.of(GCRA, HOURLY));
		assertThat(redis.calls).as("kept until the shortest retry-after").hasSize(4);
	}

	@Test
	void forgetsTheDenialsOfAKeyUnderEveryPolicy() {
		StubExecutor redis = redis((call) -> reply(call.keys().size() == 1 ? DENIED : concat(DENIED, DENIED)));
		RedisRateLimitStore store = builder(redis).build();
		store.limiter(GCRA).decide("k");
		store.decideAll("k", List.of(GCRA, LEAKY));
		store.limiter(GCRA).decide("other");
		store.receive("reset:k");
		store.limiter(GCRA).decide("k");
		store.decideAll("k", List.of(GCRA, LEAKY));
		store.limiter(GCRA).decide("other");
		assertThat(redis.calls).hasSize(5);
	}

	@Test
	void keepsNoReplyToACallSentBeforeItsKeyWasForgotten() {
		AtomicReference<RedisRateLimitStore> store = new AtomicReference<>();
		StubExecutor redis = redis((call) -> {
			if (store.get() != null) {
				// the key is reset while its call is on its way
				store.get().receive("reset:k");
			}
			return reply(DENIED);
		});
		store.set(builder(redis).build());
		store.get().limiter(GCRA).decide("k");
		store.get().limiter(GCRA).decide("k");
		assertThat(redis.calls).hasSize(2);
	}

	@Test
	void asksRedisEveryTimeWhenTurnedOff() {
		StubExecutor redis = redis((call) -> reply(DENIED));
		RedisRateLimitStore store = builder(redis).localDenials(false).build();
		store.limiter(GCRA).decide("k");
		store.limiter(GCRA).decide("k");
		assertThat(redis.calls).hasSize(2);
	}

	@Test
	void dropsExpiredDenialsFirstThenThoseThatExpireSoonestWhenFull() {
		LocalDenials denials = new LocalDenials();
		RedisLimiter limiter = (RedisLimiter) builder(redis((call) -> reply(DENIED))).build().limiter(GCRA);
		List<RedisLimiter> stack = List.of(limiter);
		for (int i = 0; i < LocalDenials.MAX_KEYS; i++) {
			// key i holds for i + 1 ns from 0
			denials.keep("k" + i, stack, List.of(denial(i + 1)), 0, denials.epoch(), 0);
		}
		assertThat(denials.keys()).isEqualTo(LocalDenials.MAX_KEYS);
		denials.keep("late", stack, List.of(denial(1_000_000)), 100, denials.epoch(), 100);
		assertThat(denials.keys()).isEqualTo(LocalDenials.MAX_KEYS * 3 / 4 + 1);
		assertThat(denials.find("k99", stack, 100)).as("expired").isNull();
		assertThat(denials.find("k" + (LocalDenials.MAX_KEYS / 4 - 1), stack, 100)).as("expires soonest").isNull();
		assertThat(denials.find("k" + LocalDenials.MAX_KEYS / 4, stack, 100)).isNotNull();
		assertThat(denials.find("late", stack, 100)).isNotNull();
	}

	private static Decision denial(long retryAfterNanos) {
		return new Decision(false, 3, 0, retryAfterNanos, retryAfterNanos, 0);
	}

	private RedisRateLimitStore.Builder builder(StubExecutor redis) {
		return RedisRateLimitStore.builder(redis)
			.scheduler(new ManualScheduler(new ManualTimeSource(0)))
			.ticker(this.ticker)
			.timeout(Duration.ofSeconds(1));
	}

	private static StubExecutor redis(Function<Call, CompletionStage<List<Long>>> answer) {
		return new StubExecutor((call) -> call.sha1().equals(RedisScripts.get().fleet().sha1())
				? CompletableFuture.completedFuture(List.of(1L, 1_764_000_000L, 0L, 0L, 0L, 0L)) : answer.apply(call));
	}

	private static CompletableFuture<List<Long>> reply(List<Long> values) {
		return CompletableFuture.completedFuture(values);
	}

	private static List<Long> concat(List<Long> first, List<Long> second) {
		List<Long> both = new ArrayList<>(first);
		both.addAll(second);
		return both;
	}

}
