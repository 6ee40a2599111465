package dev.ratelimit.core.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.Decision;
import dev.ratelimit.core.FailurePolicy;
import dev.ratelimit.core.FailureStatus;
import dev.ratelimit.core.KeyedPolicy;
import dev.ratelimit.core.ManualTimeSource;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.RateLimitStore;
import dev.ratelimit.core.RateLimiter;
import dev.ratelimit.core.internal.FailurePolicyDecisions;
import dev.ratelimit.core.internal.OutageDetector;
import dev.ratelimit.core.memory.InMemoryRateLimitStore;
import dev.ratelimit.core.testing.FailLoudly;
import dev.ratelimit.core.testing.ManualScheduler;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.tuple;

class RedisRateLimitStoreTests {

	private static final RateLimitPolicy GCRA = RateLimitPolicy.of("api", Algorithm.GCRA, 3, Duration.ofSeconds(10));

	private static final RateLimitPolicy LEAKY = RateLimitPolicy.of("smooth", Algorithm.LEAKY_BUCKET, 2,
			Duration.ofSeconds(1))
		.withBurst(5)
		.withDelayAfter(2);

	private static final RateLimitPolicy TEN_PER_MINUTE = RateLimitPolicy.of("ten", Algorithm.FIXED_WINDOW, 10,
			Duration.ofMinutes(1));

	private final ExecutorService threads = Executors.newCachedThreadPool();

	private final ManualTimeSource clock = new ManualTimeSource(0);

	/** The Redis of the last {@link #fleetOfThree} store. */
	private StubExecutor redis = new StubExecutor((call) -> new CompletableFuture<>());

	@AfterEach
	void stopThreads() {
		this.threads.shutdownNow();
	}

	@Test
	void passesTheDocumentedArgumentsToAnAlgorithmsScript() {
		StubExecutor redis = new StubExecutor((call) -> reply(1, 2, 0, 3333334, 0, 0, 666, 0, 7));
		RedisRateLimitStore store = builder(redis).build();
		store.limiter(GCRA).decide("203.0.113.7");
		store.limiter(LEAKY).decide("203.0.113.7");
		Call gcra = redis.calls.get(0);
		assertThat(gcra.script).isEqualTo(RedisScripts.get().standalone(Algorithm.GCRA).source());
		assertThat(gcra.sha1).isEqualTo(RedisScripts.get().standalone(Algorithm.GCRA).sha1());
		assertThat(gcra.keys).containsExactly("ratelimit:{203.0.113.7}:api");
		assertThat(gcra.args).containsExactly("3", "10000000", "3", "1", "");
		assertThat(redis.calls.get(1).args).containsExactly("2", "1000000", "5", "1", "", "2");
	}

	@Test
	void warmsUpEachScriptOnceUnderAKeyNoClientKeyBecomes() {
		StubExecutor redis = new StubExecutor((call) -> call.sha1.equals(RedisScripts.get().fleet().sha1())
				? reply(1, 1_764_000_000, 0, 0, 0, 0) : reply(1, 2, 0, 1, 0, 0, 0, 0, 7));
		RedisRateLimitStore store = builder(redis).build();
		RateLimitPolicy other = RateLimitPolicy.of("other", Algorithm.GCRA, 5, Duration.ofMinutes(1));
		assertThat(store.warmUp().orElseThrow().warmUp(List.of(List.of(GCRA), List.of(other), List.of(GCRA, LEAKY))))
			.isCompleted();
		assertThat(redis.calls).extracting((call) -> call.sha1)
			.containsExactlyInAnyOrder(RedisScripts.get().standalone(Algorithm.GCRA).sha1(),
					RedisScripts.get().stacked().sha1(), RedisScripts.get().fleet().sha1());
		assertThat(redis.calls).filteredOn((call) -> !call.sha1.equals(RedisScripts.get().fleet().sha1()))
			.flatExtracting((call) -> call.keys)
			.allSatisfy((key) -> assertThat(key).startsWith("ratelimit:{%warm-up}:"));
		assertThat(RedisKeys.escape("%warm-up")).isNotEqualTo("%warm-up");
	}

	@Test
	void reportsAFailedWarmUpToItsCallerOnly() {
		Failures failures = new Failures();
		RedisRateLimitStore store = builder(new StubExecutor((call) -> CompletableFuture.failedFuture(new IllegalStateException("down"))))
			.onFailure(failures)
			.build();
		assertThat(store.warmUp().orElseThrow().warmUp(List.of(List.of(GCRA)))).isCompletedExceptionally();
		assertThat(failures.causes).isEmpty();
	}

	@Test
	void putsOnlyTheSlotsOfAFailingClusterNodeOnTheFailurePolicy() {
		String failing = "client-on-a-dead-node";
		String slot = Integer.toString(RedisKeys.slot(failing));
		StubExecutor redis = new StubExecutor((call) -> call.keys.get(0).contains("{" + failing + "}")
				? CompletableFuture.failedFuture(new ScriptNotSentException(ScriptNotSentException.Reason.UNREACHABLE,
						"Connection refused", null))
				: reply(1, 2, 0, 1, 0, 0, 0, 0, 7));
		Failures failures = new Failures();
		RedisRateLimitStore store = builder(redis).cluster(true)
			.failurePolicy(FailurePolicy.DENY)
			.onFailure(failures)
			.build();
		assertThat(store.limiter(GCRA).decide(failing).allowed()).as("on the failure policy").isFalse();
		assertThat(store.failures().orElseThrow().status()).satisfies((status) -> {
			assertThat(status.failing()).isTrue();
			assertThat(status.failingPart()).isEqualTo("slots " + slot);
		});
		for (int i = 0; i < 3; i++) {
			assertThat(store.limiter(GCRA).decide("client-" + i).allowed()).as("decided by Redis").isTrue();
		}
		assertThat(failures.causes).hasSize(1);
		// the probe of the failing slot fails again; Redis answering other slots ends nothing there
		assertThat(store.limiter(GCRA).decide(failing).allowed()).isFalse();
		assertThat(store.failures().orElseThrow().status().failingPart()).isEqualTo("slots " + slot);
	}

	@Test
	void namesFailingSlotsAsRanges() {
		assertThat(StoreFailures.slots(new ArrayList<>(List.of(7, 0, 2, 1, 5461, 5460, 16383))))
			.isEqualTo("slots 0-2, 7, 5460-5461, 16383");
	}

	@Test
	void passesItsClockInMicrosecondsWhenGivenOne() {
		StubExecutor redis = new StubExecutor((call) -> reply(1, 2, 0, 1, 0, 0, 0, 0, 7));
		ManualTimeSource clock = new ManualTimeSource(1_234_567_999);
		builder(redis).timeSource(clock).keyPrefix("rl:").build().limiter(GCRA).decide("k");
		assertThat(redis.calls.get(0).keys).containsExactly("rl:{k}:api");
		assertThat(redis.calls.get(0).args.get(4)).isEqualTo("1234567");
	}

	@Test
	void decidesStackedPoliciesInOneCallOfTheStackedScript() {
		StubExecutor redis = new StubExecutor((call) -> reply(0, 2, 1, 2, 0, 0, 0, 0, 7, 0, 5, 500_000, 0, 0, 0, 0, 0, 7));
		List<Decision> decisions = builder(redis)
			.build()
			.decideAll("client", List.of(GCRA, LEAKY));
		assertThat(redis.calls).hasSize(1);
		Call call = redis.calls.get(0);
		assertThat(call.script).isEqualTo(RedisScripts.get().stacked().source());
		assertThat(call.keys).containsExactly("ratelimit:{client}:api", "ratelimit:{client}:smooth");
		assertThat(call.args).containsExactly("", "gcra", "3", "10000000", "3", "1", "0", "leaky-bucket", "2",
				"1000000", "5", "1", "2");
		assertThat(decisions).containsExactly(new Decision(false, 3, 2, 1000, 2000, 0),
				new Decision(false, 2, 5, 500_000_000, 0, 0));
	}

	@Test
	void decidesAStackOnSeveralKeysInOneCallOnASingleRedis() {
		StubExecutor redis = new StubExecutor((call) -> reply(1, 2, 0, 1, 0, 0, 0, 0, 7, 1, 4, 0, 1, 0, 0, 0, 0, 7));
		List<Decision> decisions = builder(redis).build()
			.decideAll(List.of(new KeyedPolicy("client", GCRA), new KeyedPolicy("everyone", LEAKY)));
		assertThat(redis.calls).singleElement().satisfies((call) -> {
			assertThat(call.script).isEqualTo(RedisScripts.get().stacked().source());
			assertThat(call.keys).containsExactly("ratelimit:{client}:api", "ratelimit:{everyone}:smooth");
		});
		assertThat(decisions).extracting(Decision::takenAt).containsExactly(7L, 7L);
	}

	@Test
	void givesBackInOneCallOfTheGiveBackScriptAndForgetsTheKeysDenials() {
		List<Long> denied = values(0, 0, 2_500_000, 9_000_000, 0, 0, 0, 0, 7);
		StubExecutor redis = new StubExecutor((call) -> call.sha1.equals(RedisScripts.get().giveBack().sha1())
				? reply(2) : CompletableFuture.completedFuture(denied));
		RedisRateLimitStore store = builder(redis).build();
		List<KeyedPolicy> stack = List.of(new KeyedPolicy("client", GCRA), new KeyedPolicy("everyone", LEAKY));
		store.limiter(GCRA).decide("client");
		store.limiter(GCRA).decide("client");
		assertThat(redis.calls).as("the second denied locally").hasSize(1);
		store.giveBack(stack, List.of(new Decision(true, 3, 1, 0, 1, 0, 41), new Decision(false, 2, 0, 1, 1, 0)));
		Call giveBack = redis.calls.get(1);
		assertThat(giveBack.script).isEqualTo(RedisScripts.get().giveBack().source());
		assertThat(giveBack.keys).containsExactly("ratelimit:{client}:api");
		assertThat(giveBack.args).containsExactly("", "gcra", "3", "10000000", "3", "1", "41");
		store.limiter(GCRA).decide("client");
		assertThat(redis.calls).as("decided by Redis again").hasSize(3);
	}

	@Test
	void givesBackTheSlotsBeforeOneThatDeniesOnAClusterAndAsksTheOthersWithoutTaking() {
		String[] keys = keysInSlotOrder();
		StubExecutor redis = new StubExecutor((call) -> {
			if (call.sha1.equals(RedisScripts.get().giveBack().sha1())) {
				return reply(1);
			}
			boolean peek = call.args.get(call.args.size() - 1).equals("peek");
			boolean allowed = !peek && call.keys.get(0).contains(keys[0]);
			return reply(allowed ? 1 : 0, 2, allowed ? 0 : 5, 1, 0, 0, 0, 0, 7);
		});
		List<Decision> decisions = builder(redis).cluster(true).build()
			.decideAll(List.of(new KeyedPolicy(keys[1], GCRA), new KeyedPolicy(keys[0], GCRA)));
		assertThat(decisions).extracting(Decision::allowed).containsExactly(false, false);
		assertThat(redis.calls).extracting((call) -> call.keys.get(0))
			.containsExactly("ratelimit:{" + keys[0] + "}:api", "ratelimit:{" + keys[1] + "}:api",
					"ratelimit:{" + keys[0] + "}:api", "ratelimit:{" + keys[0] + "}:api");
		assertThat(redis.calls.get(2).script).isEqualTo(RedisScripts.get().giveBack().source());
		assertThat(redis.calls.get(2).args).containsExactly("", "gcra", "3", "10000000", "3", "1", "7");
		assertThat(redis.calls.get(3).args).containsExactly("", "gcra", "3", "10000000", "3", "1", "0", "", "peek");
	}

	@Test
	void givesBackTheSlotsBeforeOneWhoseCallFailsWhenTheFailurePolicyDenies() {
		String[] keys = keysInSlotOrder();
		StubExecutor redis = new StubExecutor((call) -> {
			if (call.sha1.equals(RedisScripts.get().giveBack().sha1())) {
				return reply(1);
			}
			return call.keys.get(0).contains(keys[0]) ? reply(1, 2, 0, 1, 0, 0, 0, 0, 7)
					: CompletableFuture.failedFuture(new IllegalStateException("node down"));
		});
		Failures failures = new Failures();
		List<KeyedPolicy> stack = List.of(new KeyedPolicy(keys[0], GCRA), new KeyedPolicy(keys[1], LEAKY));
		List<Decision> denied = builder(redis).cluster(true).failurePolicy(FailurePolicy.DENY).onFailure(failures)
			.build()
			.decideAll(stack);
		assertThat(denied).extracting(Decision::allowed).containsExactly(false, false);
		assertThat(failures.causes).hasSize(1);
		assertThat(redis.calls).hasSize(3);
		assertThat(redis.calls.get(2).script).isEqualTo(RedisScripts.get().giveBack().source());
		assertThat(redis.calls.get(2).keys).containsExactly("ratelimit:{" + keys[0] + "}:api");

		redis.calls.clear();
		List<Decision> allowed = builder(redis).cluster(true).failurePolicy(FailurePolicy.ALLOW).onFailure(failures)
			.build()
			.decideAll(stack);
		assertThat(allowed).extracting(Decision::allowed).containsExactly(true, true);
		assertThat(allowed).extracting(Decision::taken).as("nothing a give-back could find").containsExactly(false, false);
		assertThat(redis.calls).as("what the first slot took stays taken: the request was admitted").hasSize(2);
	}

	@Test
	void keepsARequestThatASlotDeniedDeniedWhenTheOtherSlotsCannotBeAsked() {
		String[] keys = keysInSlotOrder();
		StubExecutor redis = new StubExecutor((call) -> {
			if (call.sha1.equals(RedisScripts.get().giveBack().sha1())) {
				return reply(1);
			}
			if (call.args.get(call.args.size() - 1).equals("peek")) {
				return CompletableFuture.failedFuture(new IllegalStateException("node down"));
			}
			boolean allowed = call.keys.get(0).contains(keys[0]);
			return reply(allowed ? 1 : 0, 2, allowed ? 0 : 5, 1, 0, 0, 0, 0, 7);
		});
		List<Decision> decisions = builder(redis).cluster(true).failurePolicy(FailurePolicy.ALLOW).build()
			.decideAll(List.of(new KeyedPolicy(keys[0], GCRA), new KeyedPolicy(keys[1], GCRA)));
		assertThat(decisions).extracting(Decision::allowed).as("denied by Redis, whatever the failure policy")
			.containsExactly(false, false);
		assertThat(decisions.get(0)).isEqualTo(new Decision(false, 3, 0, 0, 10_000_000_000L, 0));
		assertThat(redis.calls).filteredOn((call) -> call.sha1.equals(RedisScripts.get().giveBack().sha1()))
			.singleElement()
			.satisfies((call) -> assertThat(call.keys).containsExactly("ratelimit:{" + keys[0] + "}:api"));
	}

	/** Two client keys whose slots are in this order. */
	private static String[] keysInSlotOrder() {
		String first = "client-1";
		for (int i = 2;; i++) {
			String second = "client-" + i;
			if (RedisKeys.slot(second) > RedisKeys.slot(first)) {
				return new String[] { first, second };
			}
		}
	}

	@Test
	void readsExactNanosecondsFromMicrosecondsRoundedUp() {
		StubExecutor redis = new StubExecutor((call) -> reply(1, 0, 3333334, 10_000_000, 3333334, 666, 0, 666, 7));
		Decision decision = builder(redis).build().limiter(LEAKY).decide("k");
		assertThat(decision).isEqualTo(new Decision(true, 2, 0, 3_333_333_334L, 10_000_000_000L, 3_333_333_334L));
	}

	@Test
	void escapesWhatWouldBreakTheHashTag() {
		assertThat(RedisKeys.escape("203.0.113.7")).isEqualTo("203.0.113.7");
		// the slots Redis Cluster gives them (CLUSTER KEYSLOT)
		assertThat(RedisKeys.slot("somekey")).isEqualTo(11058);
		assertThat(RedisKeys.slot("hash_tag")).isEqualTo(2515);
		assertThat(RedisKeys.slot("123456789")).isEqualTo(12739);
		assertThat(RedisKeys.escape("")).isEqualTo("%");
		assertThat(RedisKeys.escape("%")).isEqualTo("%25");
		assertThat(RedisKeys.escape("}{")).isEqualTo("%7D%7B");
		assertThat(RedisKeys.escape("user:{42}%")).isEqualTo("user:%7B42%7D%25");
		assertThat(RedisKeys.escape("%7B")).isNotEqualTo(RedisKeys.escape("{"));
	}

	@Test
	void rejectsAKeyPrefixWithBraces() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> builder(new StubExecutor(null)).keyPrefix("rl:{x}:"))
			.withMessageContaining("rl:{x}:");
	}

	@Test
	void rejectsAPolicyALuaNumberCannotHold() {
		RedisRateLimitStore store = builder(new StubExecutor(null)).build();
		RateLimitPolicy centuries = RateLimitPolicy.of("centuries", Algorithm.FIXED_WINDOW, 10,
				Duration.ofDays(365 * 200));
		assertThatIllegalArgumentException().isThrownBy(() -> store.limiter(centuries))
			.withMessageContaining("'centuries'");
		// a valid policy, but one tick is 1 / (10^13 + 1) microsecond
		RateLimitPolicy huge = new RateLimitPolicy("huge", Algorithm.TOKEN_BUCKET, 10_000_000_000_001L,
				Duration.ofSeconds(1), 1, 1, 0);
		assertThatIllegalArgumentException().isThrownBy(() -> store.decideAll("k", List.of(GCRA, huge)))
			.withMessageContaining("'huge'");
	}

	@Test
	void rejectsStackedPoliciesWithTheSameName() {
		RedisRateLimitStore store = builder(new StubExecutor(null)).build();
		assertThatIllegalArgumentException()
			.isThrownBy(() -> store.decideAll("k", List.of(GCRA, GCRA.withBurst(5))))
			.withMessageContaining("'api'");
	}

	@Test
	void allowsWhenRedisFailsUnderAllow() {
		Failures failures = new Failures();
		StubExecutor redis = new StubExecutor((call) -> CompletableFuture.failedFuture(new IllegalStateException("down")));
		List<Decision> decisions = builder(redis)
			.failurePolicy(FailurePolicy.ALLOW)
			.onFailure(failures)
			.build()
			.decideAll("k", List.of(GCRA, LEAKY));
		assertThat(decisions).containsExactly(new Decision(true, 3, 2, 0, 0, 0), new Decision(true, 2, 4, 0, 0, 0));
		assertThat(failures.policies).containsExactly(List.of(GCRA, LEAKY));
		assertThat(failures.causes).singleElement().extracting(Throwable::getMessage).isEqualTo("down");
	}

	@Test
	void deniesWhenRedisFailsUnderDeny() {
		StubExecutor redis = new StubExecutor((call) -> {
			throw new IllegalStateException("closed");
		});
		List<Decision> decisions = builder(redis)
			.failurePolicy(FailurePolicy.DENY)
			.build()
			.decideAll("k", List.of(GCRA, LEAKY.withBurst(3)));
		assertThat(decisions).containsExactly(new Decision(false, 3, 0, 1_000_000_000, 10_000_000_000L, 0),
				new Decision(false, 2, 0, 1_000_000_000, 1_000_000_000, 0));
	}

	@ParameterizedTest
	@EnumSource(FailurePolicy.class)
	void tellsTheStateOfAKeyThatRedisDoesNotByTheFailurePolicy(FailurePolicy policy) {
		StubExecutor redis = new StubExecutor((call) -> CompletableFuture.failedFuture(new IllegalStateException()));
		ManualTimeSource clock = new ManualTimeSource();
		RedisRateLimitStore store = builder(redis).failurePolicy(policy)
			.fallback(InMemoryRateLimitStore.builder().timeSource(clock).build())
			.timeSource(clock)
			.build();
		store.limiter(GCRA).decide("k");
		Decision told = store.inspect("k", GCRA);
		switch (policy) {
			case ALLOW -> assertThat(told.allowed()).isTrue();
			case DENY -> assertThat(told.allowed()).isFalse();
			// the one request a window of a key Redis never told of is taken
			case LOCAL -> assertThat(told.allowed()).isFalse();
		}
		assertThat(store.inspectAsync("k", GCRA).toCompletableFuture().join()).isEqualTo(told);
	}

	@ParameterizedTest
	@EnumSource(FailurePolicy.class)
	void decidesARequestInFlightThatRedisDidNotByTheFailurePolicy(FailurePolicy policy) {
		StubExecutor redis = new StubExecutor((call) -> CompletableFuture.failedFuture(new IllegalStateException()));
		RateLimitStore.InFlight inFlight = builder(redis).failurePolicy(policy).build().inFlight().orElseThrow();
		List<Boolean> granted = new ArrayList<>();
		for (int i = 0; i < 3; i++) {
			granted.add(inFlight.acquire("report", "k", 2).toCompletableFuture().join().granted());
		}
		switch (policy) {
			case ALLOW -> assertThat(granted).containsExactly(true, true, true);
			case DENY -> assertThat(granted).containsExactly(false, false, false);
			// this instance's share of the limit, the whole of it while it knows of no other instance
			case LOCAL -> assertThat(granted).containsExactly(true, true, false);
		}
	}

	@Test
	void decidesAKeyRedisNeverAnsweredForOnOneRequestPerWindowUnderLocal() {
		StubExecutor redis = new StubExecutor((call) -> CompletableFuture.failedFuture(new IllegalStateException()));
		ManualTimeSource clock = new ManualTimeSource();
		RedisRateLimitStore store = builder(redis)
			.failurePolicy(FailurePolicy.LOCAL)
			.fallback(InMemoryRateLimitStore.builder().timeSource(clock).build())
			.timeSource(clock)
			.build();
		RateLimiter limiter = store.limiter(GCRA);
		// the other instances may have admitted the whole limit through Redis: one request keeps the bound
		assertThat(List.of(limiter.tryAcquire("k"), limiter.tryAcquire("k"), limiter.tryAcquire("other")))
			.containsExactly(true, false, true);
		assertThat(store.decideAll("k", List.of(GCRA, LEAKY))).extracting(Decision::allowed)
			.containsExactly(false, false);
		clock.advance(GCRA.window());
		assertThat(List.of(limiter.tryAcquire("k"), limiter.tryAcquire("k"))).containsExactly(true, false);
	}

	@Test
	void givesUpOnRedisAfterTheTimeoutAndCancelsTheCall() {
		CompletableFuture<List<Long>> never = new CompletableFuture<>();
		Failures failures = new Failures();
		Decision decision = builder(new StubExecutor((call) -> never))
			.timeout(Duration.ofMillis(20))
			.maxWait(Duration.ofMillis(20))
			.failurePolicy(FailurePolicy.DENY)
			.onFailure(failures)
			.build()
			.limiter(GCRA)
			.decide("k");
		assertThat(decision.allowed()).isFalse();
		assertThat(never).isCancelled();
		assertThat(failures.causes).singleElement().isInstanceOf(TimeoutException.class);
	}

	@Test
	void treatsAMalformedReplyAsAFailure() {
		Failures failures = new Failures();
		Decision decision = builder(new StubExecutor((call) -> reply(1, 2, 3)))
			.failurePolicy(FailurePolicy.DENY)
			.onFailure(failures)
			.build()
			.limiter(GCRA)
			.decide("k");
		assertThat(decision.allowed()).isFalse();
		assertThat(failures.causes).singleElement().isInstanceOf(IllegalStateException.class);
	}

	@Test
	void sendsOneDecisionAtATimeToRedisWhileItFails() throws Exception {
		List<CompletableFuture<List<Long>>> pending = new CopyOnWriteArrayList<>();
		StubExecutor redis = new StubExecutor((call) -> {
			CompletableFuture<List<Long>> reply = new CompletableFuture<>();
			pending.add(reply);
			return reply;
		});
		Failures failures = new Failures();
		RateLimiter limiter = builder(redis)
			.timeout(Duration.ofSeconds(30))
			.failurePolicy(FailurePolicy.DENY)
			.onFailure(failures)
			.build()
			.limiter(GCRA);

		Future<Decision> first = this.threads.submit(() -> limiter.decide("k"));
		awaitSize(pending, 1);
		pending.get(0).completeExceptionally(new ScriptNotSentException(ScriptNotSentException.Reason.UNREACHABLE,
				"connection refused", null));
		assertThat(first.get(30, TimeUnit.SECONDS).allowed()).isFalse();

		// Redis is failing: this decision probes it, and waits for it
		Future<Decision> probe = this.threads.submit(() -> limiter.decide("k"));
		awaitSize(pending, 2);
		// while the probe is out, the others take the failure policy without calling Redis
		for (int i = 0; i < 10; i++) {
			assertThat(this.threads.submit(() -> limiter.decide("k")).get(30, TimeUnit.SECONDS).allowed()).isFalse();
		}
		assertThat(redis.calls).hasSize(2);
		assertThat(failures.causes).hasSize(11);

		pending.get(1).complete(values(1, 2, 0, 1, 0, 0, 0, 0, 7));
		assertThat(probe.get(30, TimeUnit.SECONDS).allowed()).isTrue();
		// Redis answers again: every decision goes to it
		this.threads.submit(() -> limiter.decide("k"));
		this.threads.submit(() -> limiter.decide("k"));
		awaitSize(pending, 4);
		pending.forEach((reply) -> reply.complete(values(1, 2, 0, 1, 0, 0, 0, 0, 7)));
	}

	@Test
	void keepsDecidingWhenTheListenerThrows() {
		StubExecutor redis = new StubExecutor((call) -> CompletableFuture.failedFuture(new IllegalStateException()));
		Decision decision = builder(redis)
			.failurePolicy(FailurePolicy.ALLOW)
			.onFailure((policies, cause) -> {
				throw new IllegalStateException("listener bug");
			})
			.build()
			.limiter(GCRA)
			.decide("k");
		assertThat(decision.allowed()).isTrue();
	}

	@Test
	void letsTheTestsFailLoudlyWhenTheirRedisDoesNotDecide() {
		StubExecutor redis = new StubExecutor((call) -> CompletableFuture.failedFuture(new IllegalStateException("down")));
		RateLimiter limiter = builder(redis).failurePolicy(FailurePolicy.DENY)
			.onFailure(FailLoudly.ON_REDIS_FAILURE)
			.build()
			.limiter(GCRA);
		assertThatExceptionOfType(AssertionError.class).isThrownBy(() -> limiter.decide("k"))
			.withRootCauseInstanceOf(IllegalStateException.class);
	}

	@Test
	void decidesByTheFailurePolicyWithoutBlamingRedisWhenInterrupted() throws Exception {
		StubExecutor redis = new StubExecutor((call) -> new CompletableFuture<>());
		RateLimiter limiter = builder(redis)
			.timeout(Duration.ofSeconds(30))
			.failurePolicy(FailurePolicy.DENY)
			.build()
			.limiter(GCRA);
		Future<Boolean> interrupted = this.threads.submit(() -> {
			Thread.currentThread().interrupt();
			boolean allowed = limiter.decide("k").allowed();
			return !allowed && Thread.currentThread().isInterrupted();
		});
		assertThat(interrupted.get(30, TimeUnit.SECONDS)).isTrue();
		// not a Redis failure: the next decision still goes to Redis
		this.threads.submit(() -> limiter.decide("k"));
		awaitSize(redis.calls, 2);
	}

	@Test
	void takesTheFailurePolicyForOneLateReplyWithoutSwitchingTheOthers() {
		List<Boolean> answers = new CopyOnWriteArrayList<>(List.of(false, true, true));
		StubExecutor redis = new StubExecutor((call) -> answers.remove(0) ? reply(1, 2, 0, 1, 0, 0, 0, 0, 7)
				: new CompletableFuture<>());
		Failures failures = new Failures();
		RedisRateLimitStore store = builder(redis).timeout(Duration.ofMillis(20))
			.maxWait(Duration.ofMillis(20))
			.failurePolicy(FailurePolicy.DENY)
			.onFailure(failures)
			.build();
		assertThat(store.limiter(GCRA).decide("k").allowed()).isFalse();
		assertThat(failures.causes).singleElement().isInstanceOf(TimeoutException.class);
		assertThat(store.failures().orElseThrow().status().failing()).isFalse();
		assertThat(store.limiter(GCRA).decide("k").allowed()).isTrue();
		assertThat(store.limiter(GCRA).decide("k").allowed()).isTrue();
		assertThat(redis.calls).hasSize(3);
	}

	@Test
	void switchesToTheFailurePolicyAfterConsecutiveFailuresSentOverATimeout() {
		StubExecutor redis = new StubExecutor((call) -> CompletableFuture.failedFuture(new IllegalStateException("OOM")));
		ManualTimeSource ticker = new ManualTimeSource(0);
		RedisRateLimitStore store = builder(redis).ticker(ticker)
			.timeout(Duration.ofMillis(100))
			.failurePolicy(FailurePolicy.DENY)
			.build();
		for (int i = 1; i < OutageDetector.FAILURES_TO_SWITCH; i++) {
			store.limiter(GCRA).decide("k");
			assertThat(store.failures().orElseThrow().status().failing()).isFalse();
			ticker.advance(Duration.ofMillis(50));
		}
		store.limiter(GCRA).decide("k");
		assertThat(store.failures().orElseThrow().status().failing()).isTrue();
	}

	@Test
	void reportsSinceWhenRedisIsFailingAndWhatTheFailurePolicyDecided() {
		List<Boolean> answers = new CopyOnWriteArrayList<>(List.of(false, true, false, false, false, true));
		StubExecutor redis = new StubExecutor((call) -> answers.remove(0) ? reply(1, 2, 0, 1, 0, 0, 0, 0, 7)
				: CompletableFuture.failedFuture(new IllegalStateException("OOM")));
		ManualTimeSource ticker = new ManualTimeSource(0);
		RedisRateLimitStore store = builder(redis).ticker(ticker).failurePolicy(FailurePolicy.DENY).build();
		assertThat(store.failures().orElseThrow().status()).isEqualTo(denyStatus(null, 0, 0));
		store.limiter(GCRA).decide("k");
		store.limiter(GCRA).decide("k");
		assertThat(store.failures().orElseThrow().status()).as("one failure, then an answer")
			.isEqualTo(denyStatus(null, 1, 0));
		for (int i = 0; i < OutageDetector.FAILURES_TO_SWITCH; i++) {
			store.limiter(GCRA).decide("k");
			ticker.advance(Duration.ofMillis(50));
		}
		assertThat(store.failures().orElseThrow().status().failing()).isTrue();
		ticker.advance(Duration.ofSeconds(3));
		assertThat(store.failures().orElseThrow().status()).isEqualTo(denyStatus(Duration.ofMillis(3050), 4, 1));
		assertThat(store.failures().orElseThrow().status().failing()).isTrue();
		answers.addAll(0, List.of(false, false));
		store.limiter(GCRA).decide("k");
		store.limiter(GCRA).decide("k");
		assertThat(store.failures().orElseThrow().status()).as("two probes that failed")
			.isEqualTo(denyStatus(Duration.ofMillis(3050), 6, 3));
		store.limiter(GCRA).decide("k");
		assertThat(store.failures().orElseThrow().status().failing()).isFalse();
		assertThat(store.failures().orElseThrow().status()).isEqualTo(denyStatus(null, 6, 0));
	}

	@Test
	void rejectsAnInconsistentFailureStatus() {
		assertThatIllegalArgumentException().isThrownBy(() -> denyStatus(null, 3, 1))
			.withMessageContaining("decisionsDuringOutage");
		assertThatIllegalArgumentException().isThrownBy(() -> denyStatus(Duration.ZERO, 1, 2))
			.withMessageContaining("decisionsDuringOutage");
		assertThatIllegalArgumentException().isThrownBy(() -> denyStatus(Duration.ofNanos(-1), 1, 1))
			.withMessageContaining("failingFor");
	}

	@Test
	void takesNoOutageFromManyCallsFailingAtOneInstant() {
		StubExecutor redis = new StubExecutor((call) -> CompletableFuture.failedFuture(new IllegalStateException("slow")));
		RedisRateLimitStore store = builder(redis).ticker(new ManualTimeSource(0))
			.failurePolicy(FailurePolicy.DENY)
			.build();
		for (int i = 0; i < 60; i++) {
			store.limiter(GCRA).decide("k");
		}
		assertThat(store.failures().orElseThrow().status().failing()).isFalse();
		assertThat(redis.calls).hasSize(60);
	}

	@Test
	void switchesAtOnceWhenRedisCannotBeReachedAndBackAtItsFirstAnswer() {
		List<Boolean> reachable = new CopyOnWriteArrayList<>(List.of(false, true));
		StubExecutor redis = new StubExecutor((call) -> reachable.remove(0) ? reply(1, 2, 0, 1, 0, 0, 0, 0, 7)
				: CompletableFuture.failedFuture(new ScriptNotSentException(ScriptNotSentException.Reason.UNREACHABLE,
						"refused", null)));
		RedisRateLimitStore store = builder(redis).timeout(Duration.ofSeconds(30)).failurePolicy(FailurePolicy.DENY)
			.build();
		assertThat(store.limiter(GCRA).decide("k").allowed()).isFalse();
		assertThat(store.failures().orElseThrow().status().failing()).isTrue();
		assertThat(store.limiter(GCRA).decide("k").allowed()).isTrue();
		assertThat(store.failures().orElseThrow().status().failing()).isFalse();
	}

	@Test
	void neverBlamesRedisForAClientWithNoConnectionFree() {
		StubExecutor redis = new StubExecutor((call) -> CompletableFuture.failedFuture(
				new ScriptNotSentException(ScriptNotSentException.Reason.CLIENT_BUSY, "pool exhausted", null)));
		Failures failures = new Failures();
		RedisRateLimitStore store = builder(redis).failurePolicy(FailurePolicy.ALLOW).onFailure(failures).build();
		for (int i = 0; i < 2 * OutageDetector.FAILURES_TO_SWITCH; i++) {
			assertThat(store.limiter(GCRA).decide("k").allowed()).isTrue();
		}
		assertThat(store.failures().orElseThrow().status().failing()).isFalse();
		assertThat(redis.calls).hasSize(2 * OutageDetector.FAILURES_TO_SWITCH);
		assertThat(failures.causes).hasSize(2 * OutageDetector.FAILURES_TO_SWITCH)
			.allSatisfy((cause) -> assertThat(cause).isInstanceOf(ScriptNotSentException.class));
	}

	@Test
	void treatsACallRedisRanAfterItsDeadlineAsLate() {
		StubExecutor redis = new StubExecutor((call) -> CompletableFuture
			.failedFuture(new IllegalStateException("LATE the caller stopped waiting at 1, Redis ran the call at 2")));
		ManualTimeSource ticker = new ManualTimeSource(0);
		RedisRateLimitStore store = builder(redis).ticker(ticker).failurePolicy(FailurePolicy.DENY).build();
		store.limiter(GCRA).decide("k");
		ticker.advance(Duration.ofMillis(100));
		store.limiter(GCRA).decide("k");
		assertThat(store.failures().orElseThrow().status().failing()).isFalse();
		store.limiter(GCRA).decide("k");
		assertThat(store.failures().orElseThrow().status().failing()).isTrue();
	}

	@Test
	void sendsTheRedisTimeAtWhichItStopsWaitingOnceAHeartbeatToldItRedisClock() {
		StubExecutor redis = new StubExecutor((call) -> call.sha1.equals(RedisScripts.get().fleet().sha1())
				? reply(1, 1_764_000_000, 250_000, 0, 0, 0)
				: (call.keys.size() == 1) ? reply(1, 2, 0, 1, 0, 0, 0, 0, 7) : reply(1, 2, 0, 1, 0, 0, 0, 0, 7, 1, 2, 0, 1, 0, 0, 0, 0, 7));
		RedisRateLimitStore store = builder(redis).timeout(Duration.ofSeconds(5)).build();
		assertThat(store.warmUp().orElseThrow().warmUp(List.of())).isCompleted();
		store.limiter(GCRA).decide("k");
		store.decideAll("k", List.of(GCRA, LEAKY));
		List<String> standalone = redis.calls.get(1).args;
		assertThat(standalone).hasSize(7);
		assertThat(standalone.get(5)).isEmpty();
		long deadline = Long.parseLong(standalone.get(6));
		// Redis read 1 764 000 000.25 s no later than now here: it stops waiting at most 5 s after that
		assertThat(deadline).isBetween(1_764_000_000_250_000L, 1_764_000_005_250_000L + 1_000_000);
		List<String> stacked = redis.calls.get(2).args;
		assertThat(stacked).hasSize(2 + 6 * 2);
		assertThat(Long.parseLong(stacked.get(13))).isGreaterThanOrEqualTo(deadline);
	}

	@Test
	void fallsBackOnItsShareOfWhatRedisLastSaidWasLeftUntilRedisSaidTheKeyWouldBeFull() {
		// a fleet of three; Redis said 8 of 10 were left, the window ending in a minute
		List<Boolean> up = new CopyOnWriteArrayList<>(List.of(true));
		RedisRateLimitStore store = fleetOfThree(up, 8);
		assertThat(store.limiter(TEN_PER_MINUTE).decide("k").remaining()).isEqualTo(8);
		up.set(0, false);
		// ceil(8 / 3) = 3, not a fresh share of ceil(10 / 3) = 4, on top of what Redis admitted
		assertThat(allowed(store.limiter(TEN_PER_MINUTE), "k", 20)).isEqualTo(3);
		assertThat(store.limiter(TEN_PER_MINUTE).decide("k")).satisfies((denied) -> {
			assertThat(denied.remaining()).isZero();
			assertThat(denied.retryAfterNanos()).isPositive().isLessThanOrEqualTo(Duration.ofMinutes(1).toNanos());
		});
		// a key Redis never answered for: one request per window
		assertThat(allowed(store.limiter(TEN_PER_MINUTE), "other", 20)).isEqualTo(1);
		this.clock.advance(Duration.ofMinutes(1));
		// what Redis said no longer holds: the key is as unknown as any
		assertThat(allowed(store.limiter(TEN_PER_MINUTE), "k", 20)).isEqualTo(1);
	}

	@Test
	void tellsRedisWhatItAdmittedWithoutItBeforeRedisDecidesTheKeyAgain() {
		// a Redis that counts: 10 per minute, for a fleet of three
		List<Boolean> up = new CopyOnWriteArrayList<>(List.of(true));
		AtomicLong left = new AtomicLong(10);
		RedisRateLimitStore store = builder(new StubExecutor((call) -> {
			if (!up.get(0)) {
				return CompletableFuture.failedFuture(
						new ScriptNotSentException(ScriptNotSentException.Reason.UNREACHABLE, "refused", null));
			}
			if (call.sha1.equals(RedisScripts.get().fleet().sha1())) {
				return reply(3, 1_764_000_000, 0, 0, 0, 0);
			}
			long cost = Long.parseLong(call.args.get(3));
			boolean allowed = left.get() >= cost;
			return reply(allowed ? 1 : 0, allowed ? left.addAndGet(-cost) : left.get(), 0, 60_000_000, 0, 0, 0, 0, 7);
		})).timeSource(this.clock).build();
		assertThat(store.warmUp().orElseThrow().warmUp(List.of())).isCompleted();
		assertThat(store.limiter(TEN_PER_MINUTE).decide("k").remaining()).isEqualTo(9);
		up.set(0, false);
		// ceil(9 / 3) = 3 of what Redis said was left
		assertThat(allowed(store.limiter(TEN_PER_MINUTE), "k", 20)).isEqualTo(3);
		up.set(0, true);
		// Redis is told of the 3 first, then decides: 9 - 3 - 1 left
		assertThat(store.limiter(TEN_PER_MINUTE).decide("k").remaining()).isEqualTo(5);
		assertThat(left).hasValue(5);
		up.set(0, false);
		// ceil(5 / 3) = 2 of what Redis said, but this instance's share of the window, ceil(10 / 3) = 4, had 1 left
		assertThat(allowed(store.limiter(TEN_PER_MINUTE), "k", 20)).isEqualTo(1);
	}

	@Test
	void takesEveryCostOfAPolicyFromOneLocalShareWhileRedisFails() {
		List<Boolean> up = new CopyOnWriteArrayList<>(List.of(true));
		RedisRateLimitStore store = fleetOfThree(up, 11);
		RateLimitPolicy twelve = RateLimitPolicy.of("twelve", Algorithm.FIXED_WINDOW, 12, Duration.ofMinutes(1));
		store.limiter(twelve).decide("k");
		store.limiter(twelve).decide("other");
		up.set(0, false);
		// a share of 4, and 4 of the 11 left: a request of 5 takes all of it, and leaves nothing to a request of 1
		assertThat(store.limiter(twelve.withCost(5)).decide("k").allowed()).isTrue();
		assertThat(store.limiter(twelve).decide("k").allowed()).isFalse();
		assertThat(store.limiter(twelve.withCost(2)).decide("other").allowed()).isTrue();
		assertThat(store.limiter(twelve).decide("other").allowed()).isTrue();
		assertThat(store.limiter(twelve.withCost(2)).decide("other").allowed()).isFalse();
	}

	@Test
	void givesItsPartOfWhatRedisSaidBackWhenAnotherLimitOfTheStackDenies() {
		List<Boolean> up = new CopyOnWriteArrayList<>(List.of(true));
		RedisRateLimitStore store = fleetOfThree(up, 8);
		RateLimitPolicy perMinute = RateLimitPolicy.of("minute", Algorithm.FIXED_WINDOW, 10, Duration.ofMinutes(1));
		RateLimitPolicy perHour = RateLimitPolicy.of("hour", Algorithm.FIXED_WINDOW, 10, Duration.ofHours(1));
		store.limiter(perMinute).decide("k");
		up.set(0, false);
		// the hour is unknown, one request; the minute's part of 3 loses nothing to the requests the hour denies
		assertThat(store.decideAll("k", List.of(perMinute, perHour))).extracting(Decision::allowed)
			.containsExactly(true, true);
		for (int i = 0; i < 5; i++) {
			assertThat(store.decideAll("k", List.of(perMinute, perHour))).extracting(Decision::allowed)
				.containsExactly(false, false);
		}
		assertThat(allowed(store.limiter(perMinute), "k", 20)).isEqualTo(2);
	}

	@Test
	void tellsRedisWhatItAdmittedWithoutItOnceRedisAnswersAgain() {
		List<Boolean> up = new CopyOnWriteArrayList<>(List.of(true));
		ManualScheduler scheduler = new ManualScheduler(new ManualTimeSource(0));
		RedisRateLimitStore store = owingTwoPermitsOfK(up, scheduler);
		up.set(0, false);
		assertThat(allowed(store.limiter(TEN_PER_MINUTE), "other", 2)).isEqualTo(1);
		up.set(0, true);
		List<Call> before = decisionCalls();
		store.limiter(TEN_PER_MINUTE).decide("third");
		scheduler.advance(Duration.ZERO);
		// keys that may still be deciding are left to their own next decision, which tells Redis first
		assertThat(decisionCalls()).hasSize(before.size() + 1);
		passQuiet(scheduler);
		// then one decision each, of the permits admitted without Redis, so that every instance counts them
		assertThat(decisionCalls()).hasSize(before.size() + 3)
			.filteredOn((call) -> !before.contains(call) && !call.keys().get(0).contains("{third}"))
			.extracting((call) -> call.keys().get(0).replaceAll(".*\\{(.*)}.*", "$1"), (call) -> call.args().get(3))
			.containsExactlyInAnyOrder(tuple("k", "2"), tuple("other", "1"));
		// told once: the next reply starts no other round
		store.limiter(TEN_PER_MINUTE).decide("fourth");
		scheduler.advance(Duration.ZERO);
		assertThat(decisionCalls()).hasSize(before.size() + 4);
	}

	/**
	 * A key still deciding on this instance tells Redis through its own next decision, before it: a round beside
	 * it could let Redis decide that decision without counting what it was about to be told.
	 */
	@Test
	void leavesAKeyInUseToItsOwnDecisions() {
		List<Boolean> up = new CopyOnWriteArrayList<>(List.of(true));
		ManualScheduler scheduler = new ManualScheduler(new ManualTimeSource(0));
		RedisRateLimitStore store = owingTwoPermitsOfK(up, scheduler);
		List<Call> before = decisionCalls();
		store.limiter(TEN_PER_MINUTE).decide("k");
		scheduler.advance(Duration.ZERO);
		passQuiet(scheduler);
		// the charge of the two permits, then the decision: nothing from a round
		assertThat(decisionCalls()).hasSize(before.size() + 2)
			.filteredOn((call) -> !before.contains(call))
			.extracting((call) -> call.args().get(3))
			.containsExactly("2", "1");
	}

	/**
	 * Without Redis nothing is reserved: a request that may wait is decided as any other, on what Redis last
	 * said was left, and waits for nothing.
	 */
	@Test
	void reservesNothingWithoutRedis() throws Exception {
		List<Boolean> up = new CopyOnWriteArrayList<>(List.of(true));
		RedisRateLimitStore store = fleetOf(1, up, 1, new ManualScheduler(new ManualTimeSource(0)));
		RateLimiter limiter = store.limiter(RateLimitPolicy.of("two", Algorithm.GCRA, 2, Duration.ofSeconds(10)));
		assertThat(limiter.decide("k").allowed()).isTrue();
		up.set(0, false);
		Decision last = limiter.acquire("k", Duration.ofSeconds(10));
		assertThat(last.allowed()).isTrue();
		assertThat(last.delayNanos()).isZero();
		assertThat(limiter.acquire("k", Duration.ofSeconds(10)).allowed()).as("the one permit left taken").isFalse();
	}

	/**
	 * A store of a fleet of three whose failure policy admitted two permits of {@code k} under
	 * {@link #TEN_PER_MINUTE} while Redis was unreachable, which it owes Redis once it answers again.
	 */
	private RedisRateLimitStore owingTwoPermitsOfK(List<Boolean> up, ManualScheduler scheduler) {
		RedisRateLimitStore store = fleetOfThree(up, 8, scheduler);
		store.limiter(TEN_PER_MINUTE).decide("k");
		up.set(0, false);
		assertThat(allowed(store.limiter(TEN_PER_MINUTE), "k", 2)).isEqualTo(2);
		up.set(0, true);
		return store;
	}

	/** Moves the store's clock and its scheduler on until every key owed is quiet enough to be settled. */
	private void passQuiet(ManualScheduler scheduler) {
		this.clock.advance(Duration.ofNanos(Settlement.QUIET_NANOS));
		scheduler.advance(Duration.ofNanos(Settlement.QUIET_NANOS));
	}

	/** The decision calls the last {@link #fleetOfThree} store sent. */
	private List<Call> decisionCalls() {
		return this.redis.calls.stream()
			.filter((call) -> !call.sha1().equals(RedisScripts.get().fleet().sha1()))
			.toList();
	}

	/**
	 * A store on a Redis that counts three instances and answers every decision while {@code up} with
	 * {@code remaining} permits left and the key full again in a minute, and is unreachable otherwise.
	 */
	private RedisRateLimitStore fleetOfThree(List<Boolean> up, long remaining) {
		return fleetOfThree(up, remaining, new ManualScheduler(new ManualTimeSource(0)));
	}

	private RedisRateLimitStore fleetOfThree(List<Boolean> up, long remaining, ManualScheduler scheduler) {
		return fleetOf(3, up, remaining, scheduler);
	}

	private RedisRateLimitStore fleetOf(int instances, List<Boolean> up, long remaining, ManualScheduler scheduler) {
		this.redis = new StubExecutor((call) -> !up.get(0)
				? CompletableFuture.failedFuture(new ScriptNotSentException(ScriptNotSentException.Reason.UNREACHABLE,
						"refused", null))
				: call.sha1.equals(RedisScripts.get().fleet().sha1()) ? reply(instances, 1_764_000_000, 0, 0, 0, 0)
						: reply(1, remaining, 0, 60_000_000, 0, 0, 0, 0, 7));
		RedisRateLimitStore store = RedisRateLimitStore.builder(this.redis)
			.scheduler(scheduler)
			.timeSource(this.clock)
			.build();
		assertThat(store.warmUp().orElseThrow().warmUp(List.of())).isCompleted();
		return store;
	}

	private static int allowed(RateLimiter limiter, String key, int requests) {
		int allowed = 0;
		for (int i = 0; i < requests; i++) {
			allowed += limiter.decide(key).allowed() ? 1 : 0;
		}
		return allowed;
	}

	@Test
	void dividesEveryLimitOfAPolicyByTheFleetRoundingUp() {
		RateLimitPolicy bucket = RateLimitPolicy.of("b", Algorithm.TOKEN_BUCKET, 10, Duration.ofSeconds(10))
			.withBurst(20)
			.withCost(2);
		assertThat(FailurePolicyDecisions.share(bucket, 3)).satisfies((share) -> {
			assertThat(share.limit()).isEqualTo(4);
			assertThat(share.burst()).isEqualTo(7);
			assertThat(share.cost()).isEqualTo(2);
			assertThat(share.window()).isEqualTo(Duration.ofSeconds(10));
		});
		assertThat(FailurePolicyDecisions.share(bucket, 1)).isSameAs(bucket);
		assertThat(FailurePolicyDecisions.share(bucket.withCost(8), 3)).satisfies((share) -> {
			assertThat(share.burst()).isEqualTo(7);
			assertThat(share.cost()).isEqualTo(7);
		});
		RateLimitPolicy leaky = RateLimitPolicy.of("l", Algorithm.LEAKY_BUCKET, 10, Duration.ofSeconds(1))
			.withBurst(9)
			.withDelayAfter(9);
		assertThat(FailurePolicyDecisions.share(leaky, 3).delayAfter()).isEqualTo(3);
	}

	private static FailureStatus denyStatus(@Nullable Duration failingFor, long decisions, long duringOutage) {
		return new FailureStatus(FailurePolicy.DENY, failingFor, decisions, duringOutage);
	}

	/** A store whose heartbeat never runs by itself: these tests see only the calls of their decisions. */
	private static RedisRateLimitStore.Builder builder(RedisScriptExecutor executor) {
		return RedisRateLimitStore.builder(executor).scheduler(new ManualScheduler(new ManualTimeSource(0)));
	}

	private static void awaitSize(List<?> list, int size) throws InterruptedException {
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
		while (list.size() < size) {
			assertThat(System.nanoTime() - deadline).as("waiting for %d calls", size).isNegative();
			Thread.sleep(1);
		}
	}

	private static CompletableFuture<List<Long>> reply(long... values) {
		return CompletableFuture.completedFuture(values(values));
	}

	private static List<Long> values(long... values) {
		List<Long> list = new ArrayList<>();
		for (long value : values) {
			list.add(value);
		}
		return list;
	}

	record Call(String sha1, String script, List<String> keys, List<String> args) {
	}

	static final class StubExecutor implements RedisScriptExecutor {

		final List<Call> calls = new CopyOnWriteArrayList<>();

		private final Function<Call, CompletionStage<List<Long>>> answer;

		StubExecutor(Function<Call, CompletionStage<List<Long>>> answer) {
			this.answer = answer;
		}

		@Override
		public CompletionStage<List<Long>> execute(String sha1, String script, List<String> keys, List<String> args) {
			Call call = new Call(sha1, script, keys, args);
			this.calls.add(call);
			return this.answer.apply(call);
		}

	}

	static final class Failures implements RateLimitStore.FailureListener {

		final List<List<RateLimitPolicy>> policies = new CopyOnWriteArrayList<>();

		final List<Throwable> causes = new CopyOnWriteArrayList<>();

		@Override
		public void onFailure(List<RateLimitPolicy> policies, Throwable cause) {
			this.policies.add(policies);
			this.causes.add(cause);
		}

	}

}
