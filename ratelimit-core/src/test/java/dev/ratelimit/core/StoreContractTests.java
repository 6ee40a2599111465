package dev.ratelimit.core;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.IntPredicate;
import java.util.stream.IntStream;
import java.util.stream.LongStream;
import java.util.stream.Stream;

import dev.ratelimit.core.RateLimitStore.InFlight.Permit;
import dev.ratelimit.core.testing.InFlightStress;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * What every {@link RateLimitStore} must do, written once and run against each store: the decisions of the
 * reference implementations on the article's scenarios and on random traces, the exact figures of each
 * decision at the edges, stacked policies, and no more than the limit under concurrency.
 * <p>
 * A subclass supplies the store; the clock it is given is the only time the store may read.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
public abstract class StoreContractTests {

	private static final Duration TEN_SECONDS = Duration.ofSeconds(10);

	/** Concurrent attempts on one key of a policy that counts only failures. */
	private static final int ATTEMPTS = 64;

	private ExecutorService threads;

	/**
	 * Creates the store under test, reading time only from {@code clock}, which stands at zero unless a test
	 * needs a date.
	 * @param clock the clock
	 * @return the store
	 */
	protected abstract RateLimitStore createStore(ManualTimeSource clock);

	/**
	 * How many times the concurrency test releases its 200 requests per algorithm.
	 * @return the repetitions
	 */
	protected int concurrencyRepetitions() {
		return 100;
	}

	@BeforeAll
	void startThreads() {
		this.threads = Executors.newFixedThreadPool(50);
	}

	@AfterAll
	void stopThreads() {
		this.threads.shutdownNow();
	}

	static Stream<Arguments> referenceCases() {
		return ReferenceFixture.all()
			.flatMap((fixture) -> Stream.of(Algorithm.values()).map((algorithm) -> Arguments.of(fixture, algorithm)));
	}

	@ParameterizedTest(name = "{1} on {0}")
	@MethodSource("referenceCases")
	void decidesEveryRequestAsTheReference(ReferenceFixture fixture, Algorithm algorithm) {
		ManualTimeSource clock = new ManualTimeSource();
		RateLimiter limiter = createStore(clock).limiter(fixture.policy(algorithm));
		int index = 0;
		for (ReferenceFixture.Row row : fixture.rows().get(algorithm)) {
			clock.set(row.nanos());
			Decision decision = limiter.decide(row.key());
			String request = "request " + index++ + " at " + row.time() + " s, key " + row.key();
			assertThat(decision.allowed()).as(request).isEqualTo(row.allowed());
			assertThat(decision.delayNanos()).as("delay of " + request).isEqualTo(row.delayNanos());
		}
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("scenarioCounts")
	void reproducesTheArticlesScenarioTable(Algorithm algorithm, int allowedInA, int allowedInB, int mostInAWindow) {
		assertThat(allowedTimes(algorithm, "scenario-a")).hasSize(allowedInA);
		List<Long> allowedInScenarioB = allowedTimes(algorithm, "scenario-b");
		assertThat(allowedInScenarioB).hasSize(allowedInB);
		assertThat(mostInAnyWindow(allowedInScenarioB)).isEqualTo(mostInAWindow);
	}

	static Stream<Arguments> scenarioCounts() {
		// allowed in A, allowed in B, most allowed in any 10 s span of B (leaky bucket: by processing time)
		return Stream.of(Arguments.of(Algorithm.FIXED_WINDOW, 20, 20, 19),
				Arguments.of(Algorithm.SLIDING_LOG, 10, 20, 10),
				Arguments.of(Algorithm.SLIDING_WINDOW_COUNTER, 11, 20, 10),
				Arguments.of(Algorithm.TOKEN_BUCKET, 10, 29, 19), Arguments.of(Algorithm.LEAKY_BUCKET, 11, 30, 10),
				Arguments.of(Algorithm.GCRA, 10, 29, 19));
	}

	private List<Long> allowedTimes(Algorithm algorithm, String scenario) {
		ReferenceFixture fixture = ReferenceFixture.load(scenario);
		ManualTimeSource clock = new ManualTimeSource();
		RateLimiter limiter = createStore(clock).limiter(fixture.policy(algorithm));
		List<Long> done = new ArrayList<>();
		for (ReferenceFixture.Row row : fixture.rows().get(algorithm)) {
			clock.set(row.nanos());
			Decision decision = limiter.decide("client");
			if (decision.allowed()) {
				done.add(row.nanos() + decision.delayNanos());
			}
		}
		return done;
	}

	private static int mostInAnyWindow(List<Long> times) {
		int most = 0;
		for (int i = 0, start = 0; i < times.size(); i++) {
			while (times.get(i) - times.get(start) >= TEN_SECONDS.toNanos()) {
				start++;
			}
			most = Math.max(most, i - start + 1);
		}
		return most;
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void keysDoNotShareQuota(Algorithm algorithm) {
		RateLimiter limiter = createStore(new ManualTimeSource()).limiter(policy(algorithm, 2));
		int allowedA = 0;
		int allowedB = 0;
		for (int i = 0; i < 5; i++) {
			allowedA += limiter.tryAcquire("a") ? 1 : 0;
			allowedB += limiter.tryAcquire("b") ? 1 : 0;
		}
		int expected = (algorithm == Algorithm.LEAKY_BUCKET) ? 3 : 2;
		assertThat(allowedA).isEqualTo(expected);
		assertThat(allowedB).isEqualTo(expected);
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void neverAllowsMoreThanTheLimitToConcurrentRequests(Algorithm algorithm) throws Exception {
		// the leaky bucket admits its queue plus the request in service: a queue of 9 makes 10
		RateLimitPolicy policy = (algorithm == Algorithm.LEAKY_BUCKET) ? policy(algorithm, 10).withBurst(9)
				: policy(algorithm, 10);
		for (int repetition = 0; repetition < concurrencyRepetitions(); repetition++) {
			ManualTimeSource clock = new ManualTimeSource(Duration.ofSeconds(repetition).toNanos());
			RateLimiter limiter = createStore(clock).limiter(policy);
			CountDownLatch start = new CountDownLatch(1);
			List<Future<Integer>> results = new ArrayList<>();
			for (int thread = 0; thread < 50; thread++) {
				results.add(this.threads.submit(() -> {
					start.await();
					int allowed = 0;
					for (int request = 0; request < 4; request++) {
						allowed += limiter.tryAcquire("hot") ? 1 : 0;
					}
					return allowed;
				}));
			}
			start.countDown();
			int allowed = 0;
			for (Future<Integer> result : results) {
				allowed += result.get(30, TimeUnit.SECONDS);
			}
			assertThat(allowed).as("allowed in repetition %d", repetition).isEqualTo(10);
		}
	}

	@Nested
	class CostPerRequest {

		@ParameterizedTest
		@EnumSource(Algorithm.class)
		void takesTheGivenPermitsFromTheKeysOneQuota(Algorithm algorithm) {
			RateLimitPolicy policy = tenPermits(algorithm);
			RateLimitStore store = createStore(new ManualTimeSource());
			RateLimiter limiter = store.limiter(policy);
			long left = limiter.decide("k", 3).remaining();
			assertThat(limiter.tryAcquire("k", left + 1)).as("more than is left").isFalse();
			assertThat(store.limiter(policy.withCost(left)).decide("k").allowed()).as("what is left, at once")
				.isTrue();
			assertThat(limiter.tryAcquire("k", 1)).isFalse();
			assertThatIllegalArgumentException().isThrownBy(() -> limiter.decide("other", policy.capacity() + 1))
				.withMessageContaining("more than its capacity");
			assertThatIllegalArgumentException().isThrownBy(() -> limiter.decide("other", 0));
		}

		@ParameterizedTest
		@EnumSource(Algorithm.class)
		void takesARequestOfSomeCostFromTheSameQuotaAsRequestsOfAnother(Algorithm algorithm) {
			RateLimitPolicy policy = tenPermits(algorithm);
			RateLimitStore single = createStore(new ManualTimeSource());
			for (int i = 0; i < 4; i++) {
				single.limiter(policy).decide("k");
			}
			RateLimitStore batched = createStore(new ManualTimeSource());
			Decision batch = batched.limiter(policy.withCost(4)).decide("k");
			assertThat(batch.allowed()).isTrue();
			int afterSingles = countAllowed(single.limiter(policy), "k");
			int afterBatch = countAllowed(batched.limiter(policy), "k");
			assertThat(afterBatch).isEqualTo(afterSingles).isLessThan(countAllowed(
					createStore(new ManualTimeSource()).limiter(policy), "k") - 3);
			assertThat(batched.limiter(policy.withCost(2)).decide("k").allowed()).isFalse();
		}

		@ParameterizedTest
		@EnumSource(Algorithm.class)
		void leavesASmallerCostThatFitsAllowedAfterALargerOneWasDenied(Algorithm algorithm) {
			RateLimitPolicy policy = tenPermits(algorithm);
			RateLimitStore store = createStore(new ManualTimeSource());
			long left = store.limiter(policy.withCost(3)).decide("k").remaining();
			// denied with one permit fewer than its cost left: the kind of denial a store may keep and repeat
			Decision large = store.limiter(policy.withCost(left + 1)).decide("k");
			assertThat(large.allowed()).isFalse();
			assertThat(large.remaining()).isEqualTo(left);
			assertThat(store.limiter(policy.withCost(1)).decide("k").allowed()).isTrue();
			assertThat(store.limiter(policy.withCost(left + 1)).decide("k").allowed()).isFalse();
			assertThat(store.limiter(policy.withCost(left - 1)).decide("k").allowed()).isTrue();
		}

		@ParameterizedTest
		@EnumSource(Algorithm.class)
		void decidesAStackWhoseCostsDifferOverEachPolicysOneQuota(Algorithm algorithm) {
			RateLimitPolicy policy = tenPermits(algorithm);
			RateLimitStore store = createStore(new ManualTimeSource());
			RateLimitPolicy ceiling = new RateLimitPolicy("ceiling", algorithm, policy.limit(), policy.window(),
					policy.burst(), 1, 0);
			assertThat(store.decideAll(List.of(new KeyedPolicy("k", policy.withCost(9)),
					new KeyedPolicy("all", ceiling.withCost(9))))).allMatch(Decision::allowed);
			assertThat(store.limiter(ceiling.withCost(2)).decide("all").allowed()).isFalse();
			assertThat(store.limiter(policy.withCost(2)).decide("k").allowed()).isFalse();
		}

		@ParameterizedTest
		@EnumSource(Algorithm.class)
		void neverAdmitsMorePermitsThanTheCapacityToConcurrentRequestsOfMixedCosts(Algorithm algorithm)
				throws Exception {
			RateLimitPolicy policy = tenPermits(algorithm);
			for (int repetition = 0; repetition < concurrencyRepetitions() / 10; repetition++) {
				RateLimitStore store = createStore(new ManualTimeSource(Duration.ofSeconds(repetition).toNanos()));
				CountDownLatch start = new CountDownLatch(1);
				List<Future<Integer>> results = new ArrayList<>();
				for (int thread = 0; thread < 50; thread++) {
					long cost = 1 + thread % 3;
					results.add(CostPerRequest.this.submit(() -> {
						start.await();
						int permits = 0;
						for (int request = 0; request < 4; request++) {
							permits += store.limiter(policy.withCost(cost)).tryAcquire("hot") ? (int) cost : 0;
						}
						return permits;
					}));
				}
				start.countDown();
				int permits = 0;
				for (Future<Integer> result : results) {
					permits += result.get(30, TimeUnit.SECONDS);
				}
				// every cost fits what any other leaves, down to the last two permits
				assertThat(permits).as("permits taken in repetition %d", repetition).isBetween(8, 10);
			}
		}

		/** Ten permits at once, the leaky bucket's queue of 9 and the request in service included. */
		private static RateLimitPolicy tenPermits(Algorithm algorithm) {
			return (algorithm == Algorithm.LEAKY_BUCKET) ? policy(algorithm, 10).withBurst(9) : policy(algorithm, 10);
		}

		private Future<Integer> submit(Callable<Integer> task) {
			return StoreContractTests.this.threads.submit(task);
		}

		private static int countAllowed(RateLimiter limiter, String key) {
			int allowed = 0;
			while (allowed < 100 && limiter.decide(key).allowed()) {
				allowed++;
			}
			return allowed;
		}

	}

	/**
	 * A policy with a penalty refuses a key for the penalty once it refused one of its requests, whatever its
	 * algorithm would say meanwhile, and takes nothing from it.
	 */
	@Nested
	class Penalties {

		private static final Duration MINUTE = Duration.ofMinutes(1);

		@ParameterizedTest
		@EnumSource(Algorithm.class)
		void refusesAKeyForThePenaltyOnceItWentOver(Algorithm algorithm) {
			ManualTimeSource clock = new ManualTimeSource();
			RateLimitStore store = createStore(clock);
			RateLimiter limiter = store.limiter(penalised(algorithm));
			int allowed = overLimit(limiter, "k");
			Decision refused = limiter.decide("k");
			assertThat(refused.allowed()).isFalse();
			assertThat(refused.remaining()).isZero();
			assertThat(refused.retryAfterNanos()).as("the rest of the penalty").isEqualTo(MINUTE.toNanos());
			// a window later the quota is back, but the key is still refused, the penalty not extended
			clock.advance(TEN_SECONDS.multipliedBy(2));
			assertThat(limiter.decide("k").retryAfterNanos()).isEqualTo(MINUTE.minusSeconds(20).toNanos());
			assertThat(limiter.tryAcquire("k")).isFalse();
			assertThat(limiter.tryAcquire("other")).as("another key").isTrue();
			assertThat(store.inspect("k", penalised(algorithm)).retryAfterNanos())
				.isEqualTo(MINUTE.minusSeconds(20).toNanos());
			clock.advance(MINUTE.minusSeconds(20));
			assertThat(overLimit(limiter, "k")).as("the whole quota after the penalty").isEqualTo(allowed);
		}

		@Test
		void aResetLiftsThePenalty() {
			ManualTimeSource clock = new ManualTimeSource();
			RateLimitStore store = createStore(clock);
			RateLimiter limiter = store.limiter(penalised(Algorithm.FIXED_WINDOW));
			overLimit(limiter, "k");
			store.reset("k", penalised(Algorithm.FIXED_WINDOW));
			assertThat(limiter.tryAcquire("k")).isTrue();
		}

		@Test
		void aRequestAnotherPolicyRefusesStartsNoPenalty() {
			ManualTimeSource clock = new ManualTimeSource();
			RateLimitStore store = createStore(clock);
			RateLimitPolicy tight = RateLimitPolicy.of("tight", Algorithm.FIXED_WINDOW, 1, TEN_SECONDS);
			List<RateLimitPolicy> stack = List.of(tight, penalised(Algorithm.GCRA));
			assertThat(store.decideAll("k", stack)).allMatch(Decision::allowed);
			List<Decision> refused = store.decideAll("k", stack);
			assertThat(refused).noneMatch(Decision::allowed);
			assertThat(refused.get(1).retryAfterNanos()).as("not the penalised policy's refusal").isZero();
			clock.advance(TEN_SECONDS);
			assertThat(store.decideAll("k", stack)).allMatch(Decision::allowed);
		}

		/** Two per ten seconds, and a minute's penalty. */
		private RateLimitPolicy penalised(Algorithm algorithm) {
			return RateLimitPolicy.of("penalised", algorithm, 2, TEN_SECONDS).withPenalty(MINUTE);
		}

		/** Takes every permit of the key, then has one request refused; returns how many were allowed. */
		private static int overLimit(RateLimiter limiter, String key) {
			int allowed = 0;
			while (limiter.decide(key).allowed()) {
				allowed++;
				assertThat(allowed).as("allowed before the limit").isLessThan(10);
			}
			return allowed;
		}

	}

	/**
	 * Requests in flight: at most the limit of a key's requests hold a permit at once, under each name apart; a
	 * permit released is there again for the next request, once however often it is released; many threads at
	 * once never hold more than the limit.
	 */
	@Nested
	class InFlightLimits {

		@Test
		void grantsAtMostTheLimitAtOnceAndAPermitAgainOnceReleased() {
			RateLimitStore.InFlight inFlight = createStore(new ManualTimeSource()).inFlight().orElseThrow();
			Permit first = acquire(inFlight, "k", 2);
			Permit second = acquire(inFlight, "k", 2);
			Permit third = acquire(inFlight, "k", 2);
			assertThat(List.of(first.granted(), second.granted(), third.granted())).containsExactly(true, true, false);
			assertThat(List.of(first.held(), second.held(), third.held())).containsExactly(1L, 2L, 2L);
			assertThat(acquire(inFlight, "other", 2).granted()).as("another key").isTrue();
			assertThat(inFlight.acquire("upload", "k", 2).toCompletableFuture().join().granted()).as("another name")
				.isTrue();
			third.release();
			first.release();
			first.release();
			Permit again = untilGranted(inFlight, "k", 2);
			assertThat(again.held()).isEqualTo(2);
			assertThat(acquire(inFlight, "k", 2).granted()).as("released once, however often").isFalse();
		}

		@Test
		void neverGrantsMoreThanTheLimitToManyThreadsAtOnce() throws Exception {
			RateLimitStore.InFlight inFlight = createStore(new ManualTimeSource()).inFlight().orElseThrow();
			assertThat(InFlightStress.mostHeldAtOnce(List.of(inFlight), ATTEMPTS, 20, 5)).as("permits held at once")
				.isBetween(1, 5);
		}

		@Test
		void refusesALimitBelowOne() {
			RateLimitStore.InFlight inFlight = createStore(new ManualTimeSource()).inFlight().orElseThrow();
			assertThatIllegalArgumentException().isThrownBy(() -> inFlight.acquire("report", "k", 0))
				.withMessage("in-flight limit 'report' must be at least 1, was 0");
		}

		private static Permit acquire(RateLimitStore.InFlight inFlight, String key, long limit) {
			return inFlight.acquire("report", key, limit).toCompletableFuture().join();
		}

		/** A store that releases without waiting may answer the next request before the release: ask again. */
		private static Permit untilGranted(RateLimitStore.InFlight inFlight, String key, long limit) {
			long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
			Permit permit = acquire(inFlight, key, limit);
			while (!permit.granted()) {
				assertThat(System.nanoTime()).as("a released permit granted again in time").isLessThan(deadline);
				Thread.onSpinWait();
				permit = acquire(inFlight, key, limit);
			}
			return permit;
		}

	}

	/**
	 * Quotas per calendar day, week or month in a time zone, on a clock standing at a date: each case gives the
	 * instant at which its period ends, as a calendar on the wall says it (independent of the implementation),
	 * and the tests check that {@code Retry-After} counts down to it exactly, across daylight-saving changes and
	 * months of 28 to 31 days, and that the quota is whole again from that instant.
	 */
	@Nested
	class CalendarWindows {

		static Stream<Arguments> periods() {
			return Stream.of(
					Arguments.of("calendar day in Europe/Berlin", "2024-03-30T22:30:00Z", "2024-03-30T23:00:00Z"),
					// the day that springs forward lasts 23 hours, the one that falls back 25
					Arguments.of("calendar day in Europe/Berlin", "2024-03-30T23:00:00Z", "2024-03-31T22:00:00Z"),
					Arguments.of("calendar day in Europe/Berlin", "2024-10-26T22:00:00Z", "2024-10-27T23:00:00Z"),
					Arguments.of("calendar day in Europe/Berlin at 06:00", "2024-07-01T03:00:00Z",
							"2024-07-01T04:00:00Z"),
					// a leap day, a month of 31 days ending, of 30, and a February of 28 in Berlin
					Arguments.of("calendar month", "2024-02-29T12:00:00Z", "2024-03-01T00:00:00Z"),
					Arguments.of("calendar month in UTC", "2023-01-31T23:59:59Z", "2023-02-01T00:00:00Z"),
					Arguments.of("calendar month", "2024-04-30T23:00:00Z", "2024-05-01T00:00:00Z"),
					Arguments.of("calendar month in Europe/Berlin", "2023-02-01T00:00:00Z", "2023-02-28T23:00:00Z"),
					// 2024-01-03 was a Wednesday
					Arguments.of("calendar week", "2024-01-03T10:00:00Z", "2024-01-08T00:00:00Z"),
					// a manual clock standing at zero, the day before starting before the Unix epoch
					Arguments.of("calendar day in Europe/Berlin", "1970-01-01T00:00:00Z", "1970-01-01T23:00:00Z"));
		}

		@ParameterizedTest(name = "{0} at {1}")
		@MethodSource("periods")
		void refusesUntilTheCalendarSaysThePeriodEnds(String window, String at, String ends) {
			Instant now = Instant.parse(at);
			Instant end = Instant.parse(ends);
			ManualTimeSource clock = new ManualTimeSource(now);
			RateLimitPolicy policy = RateLimitPolicy.of("daily", Algorithm.FIXED_WINDOW, 3, Duration.ofDays(1))
				.withCalendar(CalendarWindow.parse(window));
			RateLimiter limiter = createStore(clock).limiter(policy);
			long untilEnd = Duration.between(now, end).toNanos();
			for (int i = 2; i >= 0; i--) {
				Decision allowed = limiter.decide("k");
				assertThat(allowed.allowed()).isTrue();
				assertThat(allowed.remaining()).isEqualTo(i);
				assertThat(allowed.resetAfterNanos()).as("until the period ends").isEqualTo(untilEnd);
			}
			Decision refused = limiter.decide("k");
			assertThat(refused.allowed()).isFalse();
			assertThat(refused.retryAfterNanos()).as("until the period ends").isEqualTo(untilEnd);
			clock.set(clock.nanoTime() + untilEnd - 1000);
			assertThat(limiter.decide("k").retryAfterNanos()).as("a microsecond before its end").isEqualTo(1000);
			clock.advance(Duration.ofNanos(1000));
			Decision next = limiter.decide("k");
			assertThat(next.allowed()).as("the next period").isTrue();
			assertThat(next.remaining()).isEqualTo(2);
		}

		@Test
		void givesBackOnlyWithinThePeriodItWasTakenIn() {
			ManualTimeSource clock = new ManualTimeSource(Instant.parse("2024-03-31T21:59:59Z"));
			RateLimitStore store = createStore(clock);
			RateLimitPolicy policy = RateLimitPolicy.of("daily", Algorithm.FIXED_WINDOW, 2, Duration.ofDays(1))
				.withCalendar(CalendarWindow.parse("calendar day in Europe/Berlin"));
			Decision early = store.limiter(policy).decide("k");
			Decision late = store.limiter(policy).decide("k");
			store.giveBack(List.of(new KeyedPolicy("k", policy)), List.of(late));
			assertThat(store.limiter(policy).decide("k").remaining()).as("given back in its day").isZero();
			clock.advance(Duration.ofSeconds(1));
			store.giveBack(List.of(new KeyedPolicy("k", policy)), List.of(early));
			assertThat(store.limiter(policy).decide("k").remaining()).as("nothing given to the next day").isEqualTo(1);
		}

		@Test
		void stacksWithAShortThrottle() {
			ManualTimeSource clock = new ManualTimeSource(Instant.parse("2024-12-31T22:59:50Z"));
			RateLimitStore store = createStore(clock);
			List<RateLimitPolicy> stack = List.of(
					RateLimitPolicy.of("per-second", Algorithm.GCRA, 1, Duration.ofSeconds(1)),
					RateLimitPolicy.of("daily", Algorithm.FIXED_WINDOW, 3, Duration.ofDays(1))
						.withCalendar(CalendarWindow.parse("calendar day in Europe/Berlin")));
			int allowed = 0;
			for (int second = 0; second < 9; second++) {
				List<Decision> decisions = store.decideAll("k", stack);
				assertThat(store.decideAll("k", stack)).as("twice in one second").noneMatch(Decision::allowed);
				allowed += decisions.get(0).allowed() ? 1 : 0;
				clock.advance(Duration.ofSeconds(1));
			}
			assertThat(allowed).as("three a day, at most one a second").isEqualTo(3);
			assertThat(store.decideAll("k", stack).get(1).retryAfterNanos()).as("until midnight in Berlin")
				.isEqualTo(Duration.ofSeconds(1).toNanos());
			clock.advance(Duration.ofSeconds(1));
			assertThat(store.decideAll("k", stack)).as("a new day").allMatch(Decision::allowed);
		}

	}

	/**
	 * Requests that wait for their permits: {@link RateLimiter#acquire(String, Duration)} reserves them and
	 * returns once they are due on the store's clock, or refuses at once.
	 */
	@Nested
	class Reservations {

		@ParameterizedTest
		@EnumSource(value = Algorithm.class, names = { "GCRA", "TOKEN_BUCKET" })
		void returnsOnceThePermitIsDue(Algorithm algorithm) throws Exception {
			ManualTimeSource clock = new ManualTimeSource();
			RateLimiter limiter = emptied(clock, algorithm);
			Future<Decision> waiting = StoreContractTests.this.threads
				.submit(() -> limiter.acquire("k", Duration.ofSeconds(6)));
			// the next permit is due in five seconds: the call waits, holding it
			awaitReservation(limiter, "k");
			awaitWaits(clock, 1);
			assertThat(waiting).isNotDone();
			clock.advance(Duration.ofSeconds(5).minusNanos(1000));
			assertThat(limiter.decide("k").allowed()).as("a request that does not wait, behind the reservation")
				.isFalse();
			assertThat(waiting).isNotDone();
			clock.advance(Duration.ofNanos(1000));
			Decision decision = waiting.get(10, TimeUnit.SECONDS);
			assertThat(decision.allowed()).isTrue();
			assertThat(decision.delayNanos()).isEqualTo(Duration.ofSeconds(5).toNanos());
		}

		@ParameterizedTest
		@EnumSource(value = Algorithm.class, names = { "GCRA", "TOKEN_BUCKET" })
		void refusesAtOnceAWaitLongerThanAllowedAndTakesNothing(Algorithm algorithm) throws Exception {
			ManualTimeSource clock = new ManualTimeSource();
			RateLimiter limiter = emptied(clock, algorithm);
			// returns on this thread, the clock standing still
			Decision refused = limiter.acquire("k", Duration.ofSeconds(4));
			assertThat(refused.allowed()).isFalse();
			assertThat(refused.retryAfterNanos()).as("until a wait of four seconds is enough")
				.isEqualTo(Duration.ofSeconds(1).toNanos());
			CompletableFuture<Decision> next = limiter.acquireAsync("k", Duration.ofSeconds(5));
			assertThat(next).isNotDone();
			awaitWaits(clock, 1);
			clock.advance(Duration.ofSeconds(5));
			assertThat(next.get(10, TimeUnit.SECONDS).delayNanos()).as("nothing taken by the refusal")
				.isEqualTo(Duration.ofSeconds(5).toNanos());
		}

		@Test
		void queuesReservationsOneBehindAnother() throws Exception {
			ManualTimeSource clock = new ManualTimeSource();
			RateLimiter limiter = emptied(clock, Algorithm.GCRA);
			CompletableFuture<Decision> first = limiter.acquireAsync("k", TEN_SECONDS);
			CompletableFuture<Decision> second = limiter.acquireAsync("k", TEN_SECONDS);
			// refused: returns on this thread, the clock standing still
			Decision third = limiter.acquire("k", TEN_SECONDS);
			assertThat(third.allowed()).as("a third would wait fifteen seconds").isFalse();
			assertThat(third.retryAfterNanos()).isEqualTo(Duration.ofSeconds(5).toNanos());
			Decision plain = limiter.decide("k");
			assertThat(plain.allowed()).isFalse();
			assertThat(plain.retryAfterNanos()).isEqualTo(Duration.ofSeconds(15).toNanos());
			awaitWaits(clock, 2);
			clock.advance(Duration.ofSeconds(5));
			assertThat(first.get(10, TimeUnit.SECONDS).delayNanos()).isEqualTo(Duration.ofSeconds(5).toNanos());
			assertThat(second).isNotDone();
			clock.advance(Duration.ofSeconds(5));
			assertThat(second.get(10, TimeUnit.SECONDS).delayNanos()).isEqualTo(TEN_SECONDS.toNanos());
		}

		@ParameterizedTest
		@EnumSource(value = Algorithm.class, names = { "GCRA", "TOKEN_BUCKET" }, mode = EnumSource.Mode.EXCLUDE)
		void aWaitIsRefusedWhereTheAlgorithmCannotReserve(Algorithm algorithm) throws Exception {
			RateLimitPolicy policy = RateLimitPolicy.of("window", algorithm, 2, TEN_SECONDS);
			// a leaky bucket's admitted requests otherwise wait for their slots, which it shapes itself
			RateLimiter limiter = createStore(new ManualTimeSource())
				.limiter((algorithm == Algorithm.LEAKY_BUCKET) ? policy.withDelayAfter(2) : policy);
			assertThatIllegalArgumentException().isThrownBy(() -> limiter.acquire("k", Duration.ofSeconds(1)))
				.withMessageContaining("only GCRA and TOKEN_BUCKET reserve permits");
			assertThat(limiter.acquireAsync("k", Duration.ofSeconds(1))).isCompletedExceptionally();
			// no wait: a plain decision, refused once the capacity is spent
			int allowed = 0;
			while (allowed <= policy.capacity() + 1 && limiter.acquire("k", Duration.ZERO).allowed()) {
				allowed++;
			}
			// the leaky bucket serves one and queues its burst
			long capacity = policy.capacity() + ((algorithm == Algorithm.LEAKY_BUCKET) ? 1 : 0);
			assertThat(allowed).isEqualTo(capacity);
		}

		@Test
		void aWaitLongerThanTheWindowIsRefused() {
			RateLimiter limiter = createStore(new ManualTimeSource()).limiter(policy(Algorithm.GCRA));
			assertThatIllegalArgumentException()
				.isThrownBy(() -> limiter.acquire("k", TEN_SECONDS.plusNanos(1000)))
				.withMessageContaining("between zero and the window");
		}

		/**
		 * 64 threads reserve on one key at once, each willing to wait a whole window: exactly the burst goes
		 * ahead at once and a window's permits after it, one per interval, and no more.
		 */
		@ParameterizedTest
		@EnumSource(value = Algorithm.class, names = { "GCRA", "TOKEN_BUCKET" })
		void manyThreadsOnOneKeyGetNoMoreThanTheLimit(Algorithm algorithm) throws Exception {
			RateLimitPolicy waitingAWindow = RateLimitPolicy.of("many", algorithm, 10, TEN_SECONDS)
				.withMaxWait(TEN_SECONDS);
			RateLimiter limiter = createStore(new ManualTimeSource()).limiter(waitingAWindow);
			CountDownLatch start = new CountDownLatch(1);
			List<Future<Decision>> calls = new ArrayList<>();
			for (int i = 0; i < ATTEMPTS; i++) {
				calls.add(StoreContractTests.this.threads.submit(() -> {
					start.await();
					return limiter.decide("k");
				}));
			}
			start.countDown();
			List<Long> delays = new ArrayList<>();
			for (Future<Decision> call : calls) {
				Decision decision = call.get(30, TimeUnit.SECONDS);
				if (decision.allowed()) {
					delays.add(decision.delayNanos());
				}
			}
			// each second of the window lets one more through, after the burst
			List<Long> expected = new ArrayList<>(LongStream.rangeClosed(0, 10)
				.map((second) -> Duration.ofSeconds(second).toNanos())
				.boxed()
				.toList());
			expected.addAll(Collections.nCopies(9, 0L));
			assertThat(delays).containsExactlyInAnyOrderElementsOf(expected);
		}

		/** Two per ten seconds: a permit every five seconds once the burst of two is spent. */
		private RateLimitPolicy policy(Algorithm algorithm) {
			return RateLimitPolicy.of("wait", algorithm, 2, TEN_SECONDS);
		}

		/** The limiter of {@link #policy} with the key {@code k} empty: its next permit is due in five seconds. */
		private RateLimiter emptied(ManualTimeSource clock, Algorithm algorithm) {
			RateLimiter limiter = createStore(clock).limiter(policy(algorithm));
			assertThat(limiter.tryAcquire("k", 2)).isTrue();
			return limiter;
		}

		/**
		 * Waits until another thread's call has reserved the key's next permit, as a request that does not wait
		 * sees: on an empty key, due in five seconds, it is refused for longer. Bounded, not timed: the clock
		 * stands still meanwhile.
		 */
		/**
		 * Waits until {@code count} calls wait on the clock: a call computes its wait from the clock before it
		 * starts waiting, so the clock moved in between would end the wait later than the call asked.
		 */
		private static void awaitWaits(ManualTimeSource clock, int count) {
			long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
			while (clock.waits() < count) {
				assertThat(System.nanoTime() - deadline).as("%d waits within 30 s", count).isNegative();
				Thread.yield();
			}
		}

		private static void awaitReservation(RateLimiter limiter, String key) {
			long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
			while (limiter.decide(key).retryAfterNanos() <= Duration.ofSeconds(5).toNanos()) {
				assertThat(System.nanoTime() - deadline).as("a reservation within 30 s").isNegative();
				Thread.yield();
			}
		}

	}

	@Nested
	class Stacked {

		@Test
		void aRequestDeniedByOnePolicyTakesNothingFromTheOthers() {
			ManualTimeSource clock = new ManualTimeSource();
			RateLimitStore store = createStore(clock);
			RateLimitPolicy perHundredSeconds = RateLimitPolicy.of("slow", Algorithm.FIXED_WINDOW, 5,
					Duration.ofSeconds(100));
			RateLimitPolicy perSecond = RateLimitPolicy.of("fast", Algorithm.SLIDING_LOG, 2, Duration.ofSeconds(1));
			List<RateLimitPolicy> both = List.of(perHundredSeconds, perSecond);

			assertThat(allowed(store.decideAll("k", both))).isTrue();
			assertThat(allowed(store.decideAll("k", both))).isTrue();
			List<Decision> deniedBySecond = store.decideAll("k", both);
			assertThat(deniedBySecond).extracting(Decision::allowed).containsExactly(false, false);
			assertThat(deniedBySecond.get(0).remaining()).as("slow policy untouched").isEqualTo(3);
			assertThat(deniedBySecond.get(1).retryAfterNanos()).isEqualTo(Duration.ofSeconds(1).toNanos());

			clock.advance(Duration.ofSeconds(1));
			assertThat(allowed(store.decideAll("k", both))).isTrue();
			assertThat(allowed(store.decideAll("k", both))).isTrue();
			clock.advance(Duration.ofSeconds(1));
			List<Decision> lastOfSlow = store.decideAll("k", both);
			assertThat(lastOfSlow).extracting(Decision::remaining).containsExactly(0L, 1L);
			List<Decision> deniedBySlow = store.decideAll("k", both);
			assertThat(deniedBySlow).extracting(Decision::allowed).containsExactly(false, false);
			assertThat(deniedBySlow.get(1).remaining()).as("fast policy untouched").isEqualTo(1);
			assertThat(deniedBySlow.get(0).retryAfterNanos()).isEqualTo(Duration.ofSeconds(98).toNanos());
		}

		private static boolean allowed(List<Decision> decisions) {
			return decisions.stream().allMatch(Decision::allowed);
		}

		@ParameterizedTest
		@EnumSource(Algorithm.class)
		void tellsNoWaitFromALimitThatWouldHaveAllowedWhatAnotherDenied(Algorithm algorithm) {
			RateLimitStore store = createStore(new ManualTimeSource());
			// room for exactly one more request under the first policy, none under the second
			List<RateLimitPolicy> both = List.of(policy(algorithm, 2),
					RateLimitPolicy.of("strict", Algorithm.SLIDING_LOG, 1, TEN_SECONDS));
			assertThat(allowed(store.decideAll("k", both))).isTrue();
			List<Decision> denied = store.decideAll("k", both);
			assertThat(denied).extracting(Decision::allowed).containsExactly(false, false);
			assertThat(denied.get(0).retryAfterNanos()).as("retry-after of the policy with room").isZero();
			assertThat(denied.get(1).retryAfterNanos()).isPositive();
		}

		@Test
		void rejectsTwoPoliciesWithTheSameName() {
			RateLimitStore store = createStore(new ManualTimeSource());
			RateLimitPolicy one = RateLimitPolicy.of("same", Algorithm.GCRA, 5, TEN_SECONDS);
			RateLimitPolicy other = RateLimitPolicy.of("same", Algorithm.FIXED_WINDOW, 5, TEN_SECONDS);
			assertThatIllegalArgumentException().isThrownBy(() -> store.decideAll("k", List.of(one, other)))
				.withMessageContaining("'same'");
		}

	}

	@Nested
	class CrossKeyStacks {

		private final RateLimitPolicy perClient = RateLimitPolicy.of("client", Algorithm.FIXED_WINDOW, 5, TEN_SECONDS);

		private final RateLimitPolicy total = RateLimitPolicy.of("total", Algorithm.FIXED_WINDOW, 8, TEN_SECONDS);

		private List<KeyedPolicy> stack(String client) {
			return List.of(new KeyedPolicy(client, this.perClient), new KeyedPolicy("everyone", this.total));
		}

		@Test
		void admitsOnlyWhatBothTheClientsAndTheSharedLimitAllow() {
			RateLimitStore store = createStore(new ManualTimeSource());
			for (int i = 0; i < 5; i++) {
				assertThat(allowed(store.decideAll(stack("a")))).as("request %d of a", i).isTrue();
			}
			List<Decision> sixth = store.decideAll(stack("a"));
			assertThat(sixth).extracting(Decision::allowed).containsExactly(false, false);
			assertThat(sixth.get(0).retryAfterNanos()).as("denied by its own limit").isPositive();
			assertThat(sixth.get(1).remaining()).as("the shared limit untouched").isEqualTo(3);
			assertThat(sixth.get(1).retryAfterNanos()).isZero();
			for (int i = 0; i < 3; i++) {
				assertThat(allowed(store.decideAll(stack("b")))).as("request %d of b", i).isTrue();
			}
			List<Decision> first = store.decideAll(stack("c"));
			assertThat(first).extracting(Decision::allowed).containsExactly(false, false);
			assertThat(first.get(0).remaining()).as("c's own limit untouched").isEqualTo(5);
			assertThat(first.get(1).retryAfterNanos()).as("denied by the shared limit").isPositive();
			assertThat(store.limiter(this.perClient).decide("c").remaining()).isEqualTo(4);
		}

		@Test
		void takesOnePolicyOnTwoKeysFromEach() {
			RateLimitStore store = createStore(new ManualTimeSource());
			List<Decision> both = store.decideAll(
					List.of(new KeyedPolicy("x", this.perClient), new KeyedPolicy("y", this.perClient)));
			assertThat(both).extracting(Decision::remaining).containsExactly(4L, 4L);
			assertThat(store.limiter(this.perClient).decide("x").remaining()).isEqualTo(3);
		}

		@Test
		void rejectsOnePolicyNameTwiceOnOneKey() {
			RateLimitStore store = createStore(new ManualTimeSource());
			RateLimitPolicy other = RateLimitPolicy.of("client", Algorithm.GCRA, 5, TEN_SECONDS);
			assertThatIllegalArgumentException()
				.isThrownBy(() -> store.decideAll(List.of(new KeyedPolicy("x", this.perClient),
						new KeyedPolicy("y", this.total), new KeyedPolicy("x", other))))
				.withMessageContaining("'client'")
				.withMessageContaining("'x'");
		}

		@ParameterizedTest
		@EnumSource(Algorithm.class)
		void neverAdmitsMoreThanEitherLimitToConcurrentClients(Algorithm algorithm) throws Exception {
			// 25 clients of 2 permits each, under a shared limit of 10 of every algorithm
			RateLimitPolicy mine = RateLimitPolicy.of("mine", Algorithm.FIXED_WINDOW, 2, TEN_SECONDS);
			RateLimitPolicy shared = (algorithm == Algorithm.LEAKY_BUCKET) ? policy(algorithm, 10).withBurst(9)
					: policy(algorithm, 10);
			for (int repetition = 0; repetition < concurrencyRepetitions() / 10; repetition++) {
				RateLimitStore store = createStore(new ManualTimeSource(Duration.ofSeconds(repetition).toNanos()));
				CountDownLatch start = new CountDownLatch(1);
				List<Future<Integer>> results = new ArrayList<>();
				for (int thread = 0; thread < 50; thread++) {
					String client = "client-" + (thread % 25);
					results.add(StoreContractTests.this.threads.submit(() -> {
						start.await();
						int allowed = 0;
						for (int request = 0; request < 4; request++) {
							List<Decision> decisions = store.decideAll(
									List.of(new KeyedPolicy(client, mine), new KeyedPolicy("all", shared)));
							allowed += allowed(decisions) ? 1 : 0;
						}
						return allowed;
					}));
				}
				start.countDown();
				int allowed = 0;
				for (Future<Integer> result : results) {
					allowed += result.get(30, TimeUnit.SECONDS);
				}
				assertThat(allowed).as("allowed in repetition %d", repetition).isEqualTo(10);
				for (int client = 0; client < 25; client++) {
					assertThat(store.limiter(mine).decide("client-" + client).remaining()).isBetween(0L, 1L);
				}
			}
		}

		private static boolean allowed(List<Decision> decisions) {
			return decisions.stream().allMatch(Decision::allowed);
		}

	}

	@Nested
	class GiveBack {

		private ManualTimeSource clock;

		private RateLimitStore store;

		private RateLimitStore untaken;

		private Decision take(RateLimitStore store, RateLimitPolicy policy) {
			return store.limiter(policy).decide("k");
		}

		private void giveBack(RateLimitPolicy policy, Decision decision) {
			this.store.giveBack(List.of(new KeyedPolicy("k", policy)), List.of(decision));
		}

		private void createStores() {
			this.clock = new ManualTimeSource();
			this.store = createStore(this.clock);
			this.untaken = createStore(this.clock);
		}

		@ParameterizedTest
		@EnumSource(Algorithm.class)
		void leavesTheKeyAsIfTheRequestHadNeverBeenTakenAtTheSameInstant(Algorithm algorithm) {
			RateLimitPolicy policy = policy(algorithm, 3);
			createStores();
			this.clock.set(ReferenceFixture.nanos("1"));
			take(this.store, policy);
			take(this.untaken, policy);
			Decision second = take(this.store, policy);
			assertThat(second.taken()).isTrue();
			giveBack(policy, second);
			for (int i = 0; i < 4; i++) {
				assertThat(take(this.store, policy)).as("request %d after the give-back", i)
					.isEqualTo(take(this.untaken, policy));
			}
		}

		@ParameterizedTest
		@EnumSource(Algorithm.class)
		void leavesTheKeyAsIfTheRequestHadNeverBeenTakenInALaterWindowOfTheKey(Algorithm algorithm) {
			RateLimitPolicy policy = policy(algorithm, 3);
			createStores();
			this.clock.set(ReferenceFixture.nanos("1"));
			take(this.store, policy);
			take(this.untaken, policy);
			this.clock.set(ReferenceFixture.nanos("15"));
			take(this.store, policy);
			take(this.untaken, policy);
			Decision second = take(this.store, policy);
			giveBack(policy, second);
			for (int i = 0; i < 4; i++) {
				assertThat(take(this.store, policy)).as("request %d after the give-back", i)
					.isEqualTo(take(this.untaken, policy));
			}
		}

		@ParameterizedTest
		@EnumSource(names = { "TOKEN_BUCKET", "GCRA", "LEAKY_BUCKET" })
		void givesABucketBackItsCostLessTheTimeSinceTheRequestWasTaken(Algorithm algorithm) {
			// an interval of 3.333333... s: not a whole number of microseconds
			RateLimitPolicy policy = policy(algorithm, 3);
			createStores();
			this.clock.set(ReferenceFixture.nanos("2"));
			for (int i = 0; i < 2; i++) {
				take(this.store, policy);
				take(this.untaken, policy);
			}
			Decision third = take(this.store, policy);
			this.clock.set(ReferenceFixture.nanos("3"));
			giveBack(policy, third);
			Decision after = this.store.inspect("k", policy);
			Decision reference = this.untaken.inspect("k", policy);
			// a second stricter than a key that never took it: the second a request taken meanwhile absorbed
			assertThat(after.remaining()).isEqualTo(reference.remaining());
			assertThat(after.resetAfterNanos())
				.isEqualTo(reference.resetAfterNanos() + Duration.ofSeconds(1).toNanos());
		}

		@ParameterizedTest
		@EnumSource(names = { "TOKEN_BUCKET", "GCRA", "LEAKY_BUCKET" })
		void givesABucketNothingBackOnceTheTimeItsCostTakesHasPassed(Algorithm algorithm) {
			RateLimitPolicy policy = policy(algorithm, 3);
			createStores();
			this.clock.set(ReferenceFixture.nanos("2"));
			take(this.store, policy);
			take(this.store, policy);
			Decision third = take(this.store, policy);
			// one permit comes back every 3.333333... s: its first whole microsecond after that
			this.clock.set(ReferenceFixture.nanos("5.333334"));
			Decision before = this.store.inspect("k", policy);
			giveBack(policy, third);
			assertThat(this.store.inspect("k", policy)).isEqualTo(before);
		}

		@ParameterizedTest
		@EnumSource(Algorithm.class)
		void givesNothingBackForAnInspectionOrAnAnswerMadeWithoutTheStore(Algorithm algorithm) {
			RateLimitPolicy policy = policy(algorithm, 3);
			createStores();
			this.clock.set(ReferenceFixture.nanos("1"));
			take(this.store, policy);
			take(this.untaken, policy);
			Decision inspected = this.store.inspect("k", policy);
			assertThat(inspected.allowed()).isTrue();
			giveBack(policy, inspected);
			giveBack(policy, new Decision(true, policy.limit(), policy.limit(), 0, 0, 0));
			for (int i = 0; i < 4; i++) {
				assertThat(take(this.store, policy)).as("request %d after the give-backs", i)
					.isEqualTo(take(this.untaken, policy));
			}
		}

		@Test
		void rejectsAGiveBackWithoutOneDecisionPerLimit() {
			RateLimitPolicy policy = policy(Algorithm.GCRA, 3);
			createStores();
			Decision taken = take(this.store, policy);
			List<KeyedPolicy> limits = List.of(new KeyedPolicy("k", policy), new KeyedPolicy("other", policy));
			assertThatIllegalArgumentException().isThrownBy(() -> this.store.giveBack(limits, List.of(taken)))
				.withMessageContaining("one decision per limit");
			assertThat(take(this.store, policy).remaining()).isEqualTo(1);
		}

		@ParameterizedTest
		@EnumSource(Algorithm.class)
		void isNeverMoreLenientThanIfTheRequestHadNeverBeenTaken(Algorithm algorithm) {
			RateLimitPolicy policy = policy(algorithm, 4);
			for (String givenBackAt : List.of("5", "6", "9.5", "12", "19", "25")) {
				createStores();
				take(this.store, policy);
				take(this.untaken, policy);
				this.clock.set(ReferenceFixture.nanos("1.5"));
				Decision second = take(this.store, policy);
				this.clock.set(ReferenceFixture.nanos("5"));
				take(this.store, policy);
				take(this.untaken, policy);
				this.clock.set(ReferenceFixture.nanos(givenBackAt));
				giveBack(policy, second);
				for (String at : List.of(givenBackAt, "10.5", "11.6", "15.2", "21", "30")) {
					if (ReferenceFixture.nanos(at) < ReferenceFixture.nanos(givenBackAt)) {
						continue;
					}
					this.clock.set(ReferenceFixture.nanos(at));
					Decision after = take(this.store, policy);
					Decision reference = take(this.untaken, policy);
					String when = "given back at " + givenBackAt + " s, decided at " + at + " s";
					assertThat(after.remaining()).as("remaining, " + when).isLessThanOrEqualTo(reference.remaining());
					if (after.allowed()) {
						assertThat(reference.allowed()).as("allowed, " + when).isTrue();
					}
					else if (reference.allowed()) {
						// the reference took what this store did not: keep the two comparable
						this.untaken.giveBack(List.of(new KeyedPolicy("k", policy)), List.of(reference));
					}
				}
			}
		}

		@Test
		void dropsTheSlidingLogsOwnEntryNotTheNewest() {
			RateLimitPolicy policy = policy(Algorithm.SLIDING_LOG, 2);
			createStores();
			Decision first = take(this.store, policy);
			this.clock.set(ReferenceFixture.nanos("5"));
			take(this.store, policy);
			this.clock.set(ReferenceFixture.nanos("6"));
			giveBack(policy, first);
			// the entry of 5 s is still in the window at 11 s: one permit left, not two
			this.clock.set(ReferenceFixture.nanos("11"));
			Decision decision = take(this.store, policy);
			assertThat(decision.allowed()).isTrue();
			assertThat(decision.remaining()).isZero();
		}

		@Test
		void givesAFixedWindowNothingBackOnceItsWindowHasEnded() {
			RateLimitPolicy policy = policy(Algorithm.FIXED_WINDOW, 3);
			createStores();
			this.clock.set(ReferenceFixture.nanos("9"));
			Decision lastWindow = take(this.store, policy);
			this.clock.set(ReferenceFixture.nanos("11"));
			take(this.store, policy);
			giveBack(policy, lastWindow);
			assertThat(take(this.store, policy).remaining()).isEqualTo(1);
		}

		@Test
		void givesASlidingWindowCounterBackFromThePreviousWindowOnceItHasRolled() {
			RateLimitPolicy policy = policy(Algorithm.SLIDING_WINDOW_COUNTER, 4);
			createStores();
			this.clock.set(ReferenceFixture.nanos("9"));
			Decision previous = take(this.store, policy);
			take(this.store, policy);
			this.clock.set(ReferenceFixture.nanos("15"));
			giveBack(policy, previous);
			// one left in the previous window, weighed by half: 4 - 0.5 - 1 after this request
			assertThat(take(this.store, policy).remaining()).isEqualTo(3);
			this.clock.set(ReferenceFixture.nanos("25"));
			Decision current = take(this.store, policy);
			this.clock.set(ReferenceFixture.nanos("31"));
			giveBack(policy, current);
			giveBack(policy, current);
			assertThat(take(this.store, policy).remaining()).as("nothing given back two windows later").isEqualTo(3);
		}

		@ParameterizedTest
		@EnumSource(Algorithm.class)
		void givesNothingBackForADeniedRequest(Algorithm algorithm) {
			RateLimitPolicy policy = policy(algorithm, 1).withBurst(1).withDelayAfter(0);
			createStores();
			take(this.store, policy);
			take(this.store, policy);
			Decision denied = take(this.store, policy);
			assertThat(denied.allowed()).isFalse();
			assertThat(denied.taken()).isFalse();
			giveBack(policy, denied);
			assertThat(take(this.store, policy).allowed()).isFalse();
		}

		@Test
		void givesBackEveryLimitOfAStackOnSeveralKeys() {
			RateLimitPolicy mine = RateLimitPolicy.of("mine", Algorithm.SLIDING_LOG, 2, TEN_SECONDS);
			RateLimitPolicy all = RateLimitPolicy.of("all", Algorithm.GCRA, 2, TEN_SECONDS);
			createStores();
			List<KeyedPolicy> stack = List.of(new KeyedPolicy("a", mine), new KeyedPolicy("shared", all));
			this.store.decideAll(stack);
			List<Decision> second = this.store.decideAll(stack);
			assertThat(this.store.decideAll(stack)).extracting(Decision::allowed).containsExactly(false, false);
			this.store.giveBack(stack, second);
			assertThat(this.store.decideAll(stack)).extracting(Decision::remaining).containsExactly(0L, 0L);
		}

		@ParameterizedTest
		@EnumSource(Algorithm.class)
		void keepsNoMoreThanTheLimitTakenUnderConcurrentTakersAndGivers(Algorithm algorithm) throws Exception {
			RateLimitPolicy policy = (algorithm == Algorithm.LEAKY_BUCKET) ? policy(algorithm, 10).withBurst(9)
					: policy(algorithm, 10);
			List<KeyedPolicy> limits = List.of(new KeyedPolicy("hot", policy));
			for (int repetition = 0; repetition < concurrencyRepetitions() / 10; repetition++) {
				RateLimitStore store = createStore(new ManualTimeSource(Duration.ofSeconds(repetition).toNanos()));
				CountDownLatch start = new CountDownLatch(1);
				List<Future<Integer>> results = new ArrayList<>();
				for (int thread = 0; thread < 50; thread++) {
					boolean givesBack = thread % 2 == 0;
					results.add(StoreContractTests.this.threads.submit(() -> {
						start.await();
						int kept = 0;
						for (int request = 0; request < 4; request++) {
							List<Decision> decisions = store.decideAll(limits);
							if (decisions.get(0).allowed()) {
								if (givesBack) {
									store.giveBack(limits, decisions);
								}
								else {
									kept++;
								}
							}
						}
						return kept;
					}));
				}
				start.countDown();
				int kept = 0;
				for (Future<Integer> result : results) {
					kept += result.get(30, TimeUnit.SECONDS);
				}
				// at one instant every permit given back can be taken again, and no more: the kept ones stay
				Decision after = store.decideAll(limits).get(0);
				int taken = kept + (after.allowed() ? 1 : 0);
				assertThat(kept).as("kept in repetition %d", repetition).isLessThanOrEqualTo(10);
				assertThat(after.remaining() + taken).as("remaining in repetition %d", repetition).isEqualTo(10);
			}
		}

		@ParameterizedTest
		@EnumSource(Algorithm.class)
		void countsExactlyTheLimitOfConcurrentAttemptsThatAllFail(Algorithm algorithm) throws Exception {
			List<KeyedPolicy> limits = List.of(new KeyedPolicy("login", countingPolicy(algorithm)));
			for (int repetition = 0; repetition < concurrencyRepetitions() / 10; repetition++) {
				RateLimitStore store = createStore(new ManualTimeSource(Duration.ofSeconds(repetition).toNanos()));
				int counted = attempt(store, limits, (thread) -> true);
				assertThat(counted).as("counted in repetition %d", repetition).isEqualTo(5);
				assertThat(store.decideAll(limits).get(0).allowed()).isFalse();
			}
		}

		@ParameterizedTest
		@EnumSource(Algorithm.class)
		void countsExactlyTheFailuresAmongConcurrentSuccesses(Algorithm algorithm) throws Exception {
			List<KeyedPolicy> limits = List.of(new KeyedPolicy("login", countingPolicy(algorithm)));
			for (int repetition = 0; repetition < concurrencyRepetitions() / 10; repetition++) {
				RateLimitStore store = createStore(new ManualTimeSource(Duration.ofSeconds(repetition).toNanos()));
				// one attempt in sixteen fails: 4 of the 64, fewer than the limit
				int counted = attempt(store, limits, (thread) -> thread % 16 == 0);
				assertThat(counted).as("counted in repetition %d", repetition).isBetween(0, 4);
				int left = 0;
				while (store.decideAll(limits).get(0).allowed()) {
					left++;
				}
				assertThat(left).as("permits left in repetition %d", repetition).isEqualTo(5 - counted);
			}
		}

		/** Limit 5; the leaky bucket admits its queue plus the request in service, so a queue of 4 makes 5. */
		private static RateLimitPolicy countingPolicy(Algorithm algorithm) {
			return (algorithm == Algorithm.LEAKY_BUCKET) ? policy(algorithm, 5).withBurst(4) : policy(algorithm, 5);
		}

		/**
		 * Releases {@value #ATTEMPTS} threads at once, each with one attempt; an attempt that gets in and fails
		 * keeps its permits, as a counted response does, one that succeeds gives them back. Returns how many
		 * failed attempts got in, hence were counted.
		 */
		private int attempt(RateLimitStore store, List<KeyedPolicy> limits, IntPredicate fails) throws Exception {
			ExecutorService threads = Executors.newFixedThreadPool(ATTEMPTS);
			try {
				CountDownLatch start = new CountDownLatch(1);
				List<Future<Integer>> results = new ArrayList<>();
				for (int thread = 0; thread < ATTEMPTS; thread++) {
					boolean failing = fails.test(thread);
					results.add(threads.submit(() -> {
						start.await();
						List<Decision> decisions = store.decideAll(limits);
						if (!decisions.get(0).allowed()) {
							return 0;
						}
						if (failing) {
							return 1;
						}
						store.giveBack(limits, decisions);
						return 0;
					}));
				}
				start.countDown();
				int counted = 0;
				for (Future<Integer> result : results) {
					counted += result.get(60, TimeUnit.SECONDS);
				}
				return counted;
			}
			finally {
				threads.shutdownNow();
			}
		}

	}

	@Nested
	class FixedWindow {

		@Test
		void countsDownToTheBoundaryAndResetsOnIt() {
			Harness h = new Harness(policy(Algorithm.FIXED_WINDOW, 10));
			h.at("0").expect(true, 9, 0, "10");
			h.at("9.999999");
			for (int i = 0; i < 8; i++) {
				h.request();
			}
			h.expect(true, 0, 0, "0.000001");
			h.request().expect(false, 0, "0.000001", "0.000001");
			h.at("10").expect(true, 9, 0, "10");
		}

		@Test
		void takesTheCostAndWaitsForTheNextWindowWhenItDoesNotFit() {
			Harness h = new Harness(policy(Algorithm.FIXED_WINDOW, 10).withCost(3));
			h.at("1").expect(true, 7, 0, "9");
			h.request().request().expect(true, 1, 0, "9");
			h.at("4").expect(false, 1, "6", "6");
		}

		@Test
		void startsOverAfterALongIdle() {
			Harness h = new Harness(policy(Algorithm.FIXED_WINDOW, 10));
			h.at("5").request().request();
			h.at("100005").expect(true, 9, 0, "5");
		}

	}

	@Nested
	class SlidingLog {

		@Test
		void frees_each_permit_one_window_after_it_was_taken() {
			Harness h = new Harness(policy(Algorithm.SLIDING_LOG, 3));
			h.at("0").expect(true, 2, 0, "10");
			h.at("1").expect(true, 1, 0, "10");
			h.at("2").expect(true, 0, 0, "10");
			h.at("5").expect(false, 0, "5", "7");
			h.at("9.999999").expect(false, 0, "0.000001", "2.000001");
			h.at("10").expect(true, 0, 0, "10");
		}

		@Test
		void waitsForAsManyEntriesAsTheCostNeeds() {
			Harness h = new Harness(policy(Algorithm.SLIDING_LOG, 3).withCost(2));
			h.at("0").expect(true, 1, 0, "10");
			h.at("1").expect(false, 1, "9", "9");
		}

		@Test
		void forgetsEverythingAfterALongIdle() {
			Harness h = new Harness(policy(Algorithm.SLIDING_LOG, 3));
			h.at("0").request().request().request();
			h.at("3600").expect(true, 2, 0, "10");
		}

	}

	@Nested
	class SlidingWindowCounter {

		@Test
		void weighsThePreviousWindowAsTheArticleDescribes() {
			Harness h = new Harness(policy(Algorithm.SLIDING_WINDOW_COUNTER, 10));
			h.at("9.9");
			for (int i = 0; i < 9; i++) {
				h.request();
			}
			h.expect(true, 0, 0, "10.1");
			// 10 x 0.99 = 9.9 < 10: one more passes, then 9.9 + 1 does not
			h.at("10.1").expect(true, 0, 0, "19.9");
			h.request().expect(false, 0, "0.900001", "19.9");
			h.at("11.000001").expect(true, 0, 0, "18.999999");
		}

		@Test
		void waitsIntoTheNextWindowWhenTheCurrentOneIsFull() {
			Harness h = new Harness(policy(Algorithm.SLIDING_WINDOW_COUNTER, 4));
			h.at("12").request().request().request();
			h.expect(true, 0, 0, "18");
			// 4 in the current window: allowed again as soon as 4 x (1 - e/10) < 4, just after the boundary
			h.request().expect(false, 0, "8.000001", "18");
		}

		@Test
		void countsRemainingPermitsFromTheEstimate() {
			Harness h = new Harness(policy(Algorithm.SLIDING_WINDOW_COUNTER, 10));
			h.at("0").request().request().request().request();
			h.at("15").expect(true, 7, 0, "15");
		}

		@Test
		void tellsWhenAKeyWhosePreviousWindowAloneCountsIsFull() {
			ManualTimeSource clock = new ManualTimeSource();
			RateLimitStore store = createStore(clock);
			RateLimitPolicy policy = policy(Algorithm.SLIDING_WINDOW_COUNTER, 2);
			clock.set(ReferenceFixture.nanos("9"));
			store.limiter(policy).decide("client");
			store.limiter(policy).decide("client");
			clock.set(ReferenceFixture.nanos("12"));
			// 2 x (1 - 2/10) = 1.6 of 2 used, all of it from the previous window, which stops counting at 20 s
			Decision inspected = store.inspect("client", policy);
			assertThat(inspected.allowed()).isTrue();
			assertThat(inspected.remaining()).isEqualTo(1);
			assertThat(inspected.resetAfterNanos()).isEqualTo(ReferenceFixture.nanos("8"));
		}

		@Test
		void waitsForTheNextWindowWhenItsWindowIsShorterThanItsLimit() {
			// 4 per 2 microseconds: the previous window's 4 weigh 2 at 1 microsecond into the next one
			Harness h = new Harness(RateLimitPolicy.of("edge", Algorithm.SLIDING_WINDOW_COUNTER, 4,
					Duration.ofNanos(2000)));
			h.at("0").request().request().request();
			h.at("0.000003").request();
			// 4 x (1 - 1/2) + 2 reaches the limit; the next microsecond starts a window where the 2 weigh 2 x (1 - 0/2)
			h.request().expect(false, 0, "0.000001", "0.000003");
		}

		@Test
		void takesTheCost() {
			Harness h = new Harness(policy(Algorithm.SLIDING_WINDOW_COUNTER, 10).withCost(4));
			h.at("0").request();
			h.expect(true, 2, 0, "20");
			// 8 taken: allowed once 8 x (1 - e/10) < 10 - 4 + 1, 1.25 s into the next window
			h.request().expect(false, 2, "11.250001", "20");
		}

	}

	@Nested
	class TokenBucketAndGcra {

		@ParameterizedTest
		@EnumSource(names = { "TOKEN_BUCKET", "GCRA" })
		void spendsTheBurstThenRefillsOnePermitPerInterval(Algorithm algorithm) {
			Harness h = new Harness(policy(algorithm, 10));
			h.at("0").expect(true, 9, 0, "1");
			for (int i = 0; i < 9; i++) {
				h.request();
			}
			h.expect(true, 0, 0, "10");
			h.request().expect(false, 0, "1", "10");
			h.at("0.999999").expect(false, 0, "0.000001", "9.000001");
			h.at("1").expect(true, 0, 0, "10");
			h.at("2.5").expect(true, 0, 0, "9.5");
		}

		@ParameterizedTest
		@EnumSource(names = { "TOKEN_BUCKET", "GCRA" })
		void honoursABurstSmallerThanTheLimit(Algorithm algorithm) {
			Harness h = new Harness(policy(algorithm, 10).withBurst(4));
			h.at("0").request().request().request();
			h.expect(true, 0, 0, "4");
			h.request().expect(false, 0, "1", "4");
		}

		@ParameterizedTest
		@EnumSource(names = { "TOKEN_BUCKET", "GCRA" })
		void takesTheCost(Algorithm algorithm) {
			Harness h = new Harness(policy(algorithm, 10).withCost(3));
			h.at("0").request().request();
			h.expect(true, 1, 0, "9");
			h.request().expect(false, 1, "2", "9");
		}

		@ParameterizedTest
		@EnumSource(names = { "TOKEN_BUCKET", "GCRA" })
		void roundsWaitsUpWhenTheIntervalIsNotAWholeMicrosecond(Algorithm algorithm) {
			Harness h = new Harness(policy(algorithm, 3));
			h.at("0").request().request();
			h.expect(true, 0, 0, "10");
			h.request().expectNanos(false, 0, 3_333_333_334L, 10_000_000_000L);
		}

		@ParameterizedTest
		@EnumSource(names = { "TOKEN_BUCKET", "GCRA" })
		void isFullAgainAfterALongIdle(Algorithm algorithm) {
			Harness h = new Harness(policy(algorithm, 10));
			h.at("0");
			for (int i = 0; i < 9; i++) {
				h.request();
			}
			h.at("86400").expect(true, 9, 0, "1");
		}

	}

	@Nested
	class LeakyBucket {

		@Test
		void queuesUpToTheBurstAndDelaysEachByItsSlot() {
			Harness h = new Harness(policy(Algorithm.LEAKY_BUCKET, 10));
			h.at("0").expectDelay(true, 10, "0", "1");
			for (int i = 1; i <= 10; i++) {
				h.request().expectDelay(true, 10 - i, Integer.toString(i), Integer.toString(i + 1));
			}
			h.request().expect(false, 0, "1", "11");
			h.at("1").expectDelay(true, 0, "10", "11");
		}

		@Test
		void behavesLikeNginxBurstDelayAndNodelay() {
			// nginx limit_req rate=2r/s burst=5: ten simultaneous requests
			RateLimitPolicy burst = RateLimitPolicy.of("shaped", Algorithm.LEAKY_BUCKET, 2, Duration.ofSeconds(1))
				.withBurst(5);
			assertThat(delaysOfTenAtOnce(burst)).containsExactly(0L, 500L, 1000L, 1500L, 2000L, 2500L, -1L, -1L, -1L,
					-1L);
			assertThat(delaysOfTenAtOnce(burst.withDelayAfter(5))).containsExactly(0L, 0L, 0L, 0L, 0L, 0L, -1L, -1L,
					-1L, -1L);
			assertThat(delaysOfTenAtOnce(burst.withDelayAfter(2))).containsExactly(0L, 0L, 0L, 500L, 1000L, 1500L,
					-1L, -1L, -1L, -1L);
		}

		private List<Long> delaysOfTenAtOnce(RateLimitPolicy policy) {
			RateLimiter limiter = createStore(new ManualTimeSource()).limiter(policy);
			List<Long> delays = new ArrayList<>();
			for (int i = 0; i < 10; i++) {
				Decision decision = limiter.decide("client");
				delays.add(decision.allowed() ? decision.delay().toMillis() : -1);
			}
			return delays;
		}

		@Test
		void takesTheCostAsThatManySlots() {
			Harness h = new Harness(policy(Algorithm.LEAKY_BUCKET, 10).withCost(4));
			h.at("0").expectDelay(true, 7, "0", "4");
			h.request().expectDelay(true, 3, "4", "8");
			// one slot drains per second: after one, 6 wait and a request of 4 fits
			h.request().expect(false, 3, "1", "8");
		}

		@Test
		void roundsDelaysUpWhenTheIntervalIsNotAWholeMicrosecond() {
			Harness h = new Harness(policy(Algorithm.LEAKY_BUCKET, 3));
			h.at("0");
			Decision second = h.decision();
			assertThat(second.delayNanos()).isEqualTo(3_333_333_334L);
		}

	}

	@ParameterizedTest
	@EnumSource(names = { "TOKEN_BUCKET", "GCRA", "LEAKY_BUCKET" })
	void decidesABucketAtTheFirstMicrosecondAfterAPermitCameBack(Algorithm algorithm) {
		// one permit comes back every 3.333333... s: at 5.333334 s the first one is back, and a fraction over
		Harness h = new Harness(policy(algorithm, 3));
		h.at("2");
		h.clock.set(ReferenceFixture.nanos("5.333334"));
		Decision decision = h.decision();
		assertThat(decision.allowed()).isTrue();
		assertThat(decision.resetAfterNanos()).as("reset-after, from the instant the request came")
			.isEqualTo(3_333_333_334L);
	}

	@Test
	void rejectsAPolicyThatCannotBeComputedExactly() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> RateLimitPolicy.of("daily", Algorithm.SLIDING_WINDOW_COUNTER, 1_000_000_000,
					Duration.ofDays(1)))
			.withMessageContaining("'daily'")
			.withMessageContaining("too large");
	}

	/**
	 * Inspecting, resetting and changing a policy while the application runs. A key's state is compared with
	 * that of a key that took as many permits under the same policy at the same instant.
	 */
	@Nested
	class Operations {

		private final ManualTimeSource clock = new ManualTimeSource(ReferenceFixture.nanos("1"));

		private final RateLimitStore store = createStore(this.clock);

		private int references;

		@ParameterizedTest
		@EnumSource(Algorithm.class)
		void inspectsAKeyWithoutTakingAnything(Algorithm algorithm) {
			RateLimitPolicy policy = policy(algorithm, 3);
			Decision fresh = this.store.inspect("client", policy);
			assertThat(fresh.allowed()).isTrue();
			assertThat(fresh.remaining()).isEqualTo(3);
			assertThat(fresh.retryAfterNanos()).isZero();
			assertThat(fresh.resetAfterNanos()).as("reset-after of a key never seen").isZero();
			assertThat(fresh.taken()).isFalse();
			Decision taken = take(policy);
			for (int i = 0; i < 3; i++) {
				Decision inspected = this.store.inspect("client", policy);
				assertThat(inspected.remaining()).as("inspection %d", i).isEqualTo(taken.remaining());
				assertThat(inspected.resetAfterNanos()).as("inspection %d", i).isEqualTo(taken.resetAfterNanos());
			}
			for (int i = 1; i < admits(policy); i++) {
				assertThat(take(policy).allowed()).as("request %d", i).isTrue();
			}
			Decision refused = take(policy);
			assertThat(refused.allowed()).isFalse();
			Decision inspected = this.store.inspect("client", policy);
			assertThat(inspected.allowed()).isFalse();
			assertThat(inspected).isEqualTo(refused);
		}

		@ParameterizedTest
		@EnumSource(Algorithm.class)
		void resetsAKeyToItsFullQuotaAndNoOtherKey(Algorithm algorithm) {
			RateLimitPolicy policy = policy(algorithm, 2);
			for (int i = 0; i <= admits(policy); i++) {
				take(policy);
				take(policy, "other");
			}
			this.store.reset("client", policy.withCost(2));
			assertThat(take(policy)).isEqualTo(take(policy, "fresh"));
			assertThat(take(policy, "other").allowed()).isFalse();
		}

		@ParameterizedTest
		@EnumSource(Algorithm.class)
		void keepsWhatAKeyHasUsedWhenItsLimitIsLowered(Algorithm algorithm) {
			RateLimitPolicy declared = policy(algorithm, 10);
			RateLimitPolicy lowered = changed(declared, 2);
			for (int i = 0; i < admits(declared); i++) {
				take(declared);
			}
			take(declared, "light");
			this.store.change(declared, lowered);
			assertThat(take(lowered).allowed()).as("a client that used its whole quota").isFalse();
			assertThat(this.store.inspect("client", lowered).remaining()).isZero();
			assertThat(this.store.inspect("light", lowered)).as("a client that used one permit")
				.isEqualTo(reference(lowered, 1));
			assertThat(this.store.inspect("new", lowered)).as("a client never seen").isEqualTo(reference(lowered, 0));
			this.clock.advance(lowered.fullAfter());
			assertThat(take(lowered).allowed()).as("once the new policy's keys are full again").isTrue();
		}

		@ParameterizedTest
		@EnumSource(Algorithm.class)
		void startsAKeyThatIsFullAgainFullAfterAChange(Algorithm algorithm) {
			RateLimitPolicy declared = policy(algorithm, 4);
			RateLimitPolicy lowered = changed(declared, 2);
			take(declared);
			take(declared);
			this.clock.advance(declared.fullAfter());
			this.store.change(declared, lowered);
			assertThat(this.store.inspect("client", lowered)).isEqualTo(reference(lowered, 0));
		}

		@ParameterizedTest
		@EnumSource(Algorithm.class)
		void carriesWhatAKeyHasUsedOverToARaisedLimit(Algorithm algorithm) {
			RateLimitPolicy declared = policy(algorithm, 4);
			RateLimitPolicy raised = changed(declared, 6);
			for (int i = 0; i <= admits(declared); i++) {
				take(declared);
			}
			this.store.change(declared, raised);
			assertThat(this.store.inspect("client", raised)).isEqualTo(reference(raised, admits(declared)));
			for (long i = admits(declared); i < admits(raised); i++) {
				assertThat(take(raised).allowed()).as("request %d", i).isTrue();
			}
			assertThat(take(raised).allowed()).isFalse();
		}

		@ParameterizedTest
		@EnumSource(Algorithm.class)
		void carriesOverOnceAcrossChangesInARowAndBack(Algorithm algorithm) {
			RateLimitPolicy declared = policy(algorithm, 10);
			RateLimitPolicy lowered = changed(declared, 5);
			RateLimitPolicy lowest = changed(declared, 3);
			for (int i = 0; i < 4; i++) {
				take(declared);
			}
			take(declared, "idle");
			this.store.change(declared, lowered);
			take(lowered);
			assertThat(this.store.inspect("client", lowered)).as("4 carried, one more taken")
				.isEqualTo(reference(lowered, 5));
			this.store.change(lowered, lowest);
			assertThat(this.store.inspect("client", lowest)).isEqualTo(reference(lowest, Math.min(5, admits(lowest))));
			assertThat(this.store.inspect("idle", lowest)).as("not seen since the first change: carried from the "
					+ "declared policy").isEqualTo(reference(lowest, 1));
			this.store.change(lowest, declared);
			assertThat(this.store.inspect("client", declared)).as("back to the declared policy, which gave its "
					+ "state to the first change: carried from the last one").isEqualTo(reference(declared, admits(lowest)));
		}

		@ParameterizedTest
		@EnumSource(Algorithm.class)
		void resetsAKeyThatAChangeWouldCarryOver(Algorithm algorithm) {
			RateLimitPolicy declared = policy(algorithm, 3);
			RateLimitPolicy lowered = changed(declared, 2);
			for (int i = 0; i < 3; i++) {
				take(declared);
			}
			this.store.change(declared, lowered);
			this.store.reset("client", lowered);
			assertThat(take(lowered)).isEqualTo(take(lowered, "fresh"));
		}

		@ParameterizedTest
		@EnumSource(Algorithm.class)
		void resetsEveryKeyOfEveryPolicyToItsFullQuotaAtOnce(Algorithm algorithm) {
			RateLimitPolicy policy = policy(algorithm, 2);
			RateLimitPolicy other = RateLimitPolicy.of("other", algorithm, 3, TEN_SECONDS);
			List<String> clients = IntStream.range(0, 20).mapToObj((i) -> "client-" + i).toList();
			for (String client : clients) {
				for (int i = 0; i <= admits(policy); i++) {
					take(policy, client);
				}
				assertThat(take(policy, client).allowed()).as("%s before the reset", client).isFalse();
			}
			this.store.decideAll(List.of(new KeyedPolicy("client-0", other), new KeyedPolicy("shared", other)));
			resetAll();
			for (String client : clients) {
				assertThat(take(policy, client)).as(client).isEqualTo(take(policy, "fresh-" + client));
			}
			assertThat(this.store.inspect("client-0", other)).isEqualTo(reference(other, 0));
			assertThat(this.store.inspect("shared", other)).isEqualTo(reference(other, 0));
		}

		@ParameterizedTest
		@EnumSource(Algorithm.class)
		void resetsEveryKeyThatAChangeWouldCarryOver(Algorithm algorithm) {
			RateLimitPolicy declared = policy(algorithm, 3);
			RateLimitPolicy lowered = changed(declared, 2);
			for (int i = 0; i < admits(declared); i++) {
				take(declared);
			}
			this.store.change(declared, lowered);
			resetAll();
			assertThat(take(lowered)).isEqualTo(take(lowered, "fresh"));
		}

		private void resetAll() {
			this.store.resetAll()
				.orElseThrow(() -> new AssertionError("The store does not reset every key at once"))
				.resetAll();
		}

		@ParameterizedTest
		@EnumSource(Algorithm.class)
		void carriesOverOnceUnderConcurrentFirstRequests(Algorithm algorithm) throws Exception {
			RateLimitPolicy declared = policy(algorithm, 10);
			RateLimitPolicy lowered = changed(declared, 6);
			for (int repetition = 0; repetition < concurrencyRepetitions() / 10; repetition++) {
				RateLimitStore store = createStore(new ManualTimeSource(Duration.ofSeconds(repetition).toNanos()));
				for (int i = 0; i < 5; i++) {
					store.decideAll("hot", List.of(declared));
				}
				store.change(declared, lowered);
				CountDownLatch start = new CountDownLatch(1);
				List<Future<Boolean>> results = new ArrayList<>();
				for (int thread = 0; thread < 20; thread++) {
					results.add(StoreContractTests.this.threads.submit(() -> {
						start.await();
						return store.decideAll("hot", List.of(lowered)).get(0).allowed();
					}));
				}
				start.countDown();
				int allowed = 0;
				for (Future<Boolean> result : results) {
					allowed += result.get(30, TimeUnit.SECONDS) ? 1 : 0;
				}
				assertThat(allowed).as("allowed in repetition %d", repetition).isEqualTo(admits(lowered) - 5);
			}
		}

		@Test
		void refusesToChangeAPolicyIntoAnotherOne() {
			RateLimitPolicy gcra = policy(Algorithm.GCRA, 3);
			assertThatIllegalArgumentException()
				.isThrownBy(() -> this.store.change(gcra, policy(Algorithm.TOKEN_BUCKET, 3)))
				.withMessageContaining("'edge' (GCRA) into 'edge' (TOKEN_BUCKET)");
			assertThatIllegalArgumentException()
				.isThrownBy(() -> this.store.change(gcra, RateLimitPolicy.of("other", Algorithm.GCRA, 3, TEN_SECONDS)))
				.withMessageContaining("only");
		}

		private Decision take(RateLimitPolicy policy) {
			return take(policy, "client");
		}

		private Decision take(RateLimitPolicy policy, String key) {
			return this.store.decideAll(key, List.of(policy)).get(0);
		}

		/** The state of a new key after {@code taken} requests under {@code policy}, now. */
		private Decision reference(RateLimitPolicy policy, long taken) {
			String key = "reference-" + this.references++;
			for (int i = 0; i < taken; i++) {
				assertThat(take(policy, key).allowed()).as("reference request %d", i).isTrue();
			}
			return this.store.inspect(key, policy);
		}

		/** How many requests a new key admits in a row: the leaky bucket serves one and queues its burst. */
		private static long admits(RateLimitPolicy policy) {
			return (policy.algorithm() == Algorithm.LEAKY_BUCKET) ? policy.capacity() + 1 : policy.capacity();
		}

		private static RateLimitPolicy changed(RateLimitPolicy policy, long limit) {
			return new RateLimitPolicy(policy.name(), policy.algorithm(), limit, policy.window(), limit, 1, 0);
		}

	}

	private static RateLimitPolicy policy(Algorithm algorithm, long limit) {
		return RateLimitPolicy.of("edge", algorithm, limit, TEN_SECONDS);
	}

	/** Drives one limiter of a fresh store with a manual clock and checks each decision's figures. */
	final class Harness {

		private final ManualTimeSource clock = new ManualTimeSource();

		private final RateLimiter limiter;

		private Decision last;

		Harness(RateLimitPolicy policy) {
			this.limiter = createStore(this.clock).limiter(policy);
		}

		/** Moves to {@code seconds} and makes one request there. */
		Harness at(String seconds) {
			this.clock.set(ReferenceFixture.nanos(seconds));
			return request();
		}

		Harness request() {
			this.last = this.limiter.decide("client");
			return this;
		}

		Decision decision() {
			request();
			return this.last;
		}

		Harness expect(boolean allowed, long remaining, Object retryAfterSeconds, Object resetAfterSeconds) {
			return expectNanos(allowed, remaining, ReferenceFixture.nanos(retryAfterSeconds.toString()),
					ReferenceFixture.nanos(resetAfterSeconds.toString()));
		}

		Harness expectDelay(boolean allowed, long remaining, String delaySeconds, String resetAfterSeconds) {
			expect(allowed, remaining, 0, resetAfterSeconds);
			assertThat(this.last.delayNanos()).as("delay").isEqualTo(ReferenceFixture.nanos(delaySeconds));
			return this;
		}

		Harness expectNanos(boolean allowed, long remaining, long retryAfterNanos, long resetAfterNanos) {
			assertThat(this.last.allowed()).as("allowed").isEqualTo(allowed);
			assertThat(this.last.limit()).as("limit").isEqualTo(this.limiter.policy().limit());
			assertThat(this.last.remaining()).as("remaining").isEqualTo(remaining);
			assertThat(this.last.retryAfterNanos()).as("retry-after").isEqualTo(retryAfterNanos);
			assertThat(this.last.resetAfterNanos()).as("reset-after").isEqualTo(resetAfterNanos);
			if (this.limiter.policy().algorithm() != Algorithm.LEAKY_BUCKET) {
				assertThat(this.last.delayNanos()).as("delay").isZero();
			}
			return this;
		}

	}

}
