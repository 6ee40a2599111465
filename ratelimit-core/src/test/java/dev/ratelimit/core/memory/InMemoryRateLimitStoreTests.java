package dev.ratelimit.core.memory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.Decision;
import dev.ratelimit.core.KeyedPolicy;
import dev.ratelimit.core.ManualTimeSource;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.RateLimitStore;
import dev.ratelimit.core.RateLimiter;
import dev.ratelimit.core.ReferenceFixture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class InMemoryRateLimitStoreTests {

	private final ManualTimeSource clock = new ManualTimeSource();

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void forgettingIdleKeysChangesNoDecision(Algorithm algorithm) {
		int forgotten = 0;
		for (String name : List.of("random-01", "random-04", "random-07", "scenario-b")) {
			ReferenceFixture fixture = ReferenceFixture.load(name);
			ManualTimeSource clock = new ManualTimeSource();
			InMemoryRateLimitStore forgetful = InMemoryRateLimitStore.builder().timeSource(clock).build();
			RateLimiter remembering = InMemoryRateLimitStore.builder().timeSource(clock).build()
				.limiter(fixture.policy(algorithm));
			RateLimiter forgetting = forgetful.limiter(fixture.policy(algorithm));
			long previous = 0;
			for (ReferenceFixture.Row row : fixture.rows().get(algorithm)) {
				clock.set(row.nanos());
				int before = forgetful.size();
				// alternately what a growing store forgets (idle since the last sweep) and what a full one does
				long now = forgetful.now();
				forgetful.sweep(now, (forgotten % 2 == 0) ? previous : now);
				previous = now;
				forgotten += before - forgetful.size();
				assertThat(forgetting.decide(row.key())).as("%s at %s", name, row.time())
					.isEqualTo(remembering.decide(row.key()));
			}
		}
		assertThat(forgotten).as("keys forgotten along the traces").isPositive();
	}

	@Test
	void forgetsOnlyKeysBackToTheirFullQuota() {
		InMemoryRateLimitStore store = InMemoryRateLimitStore.builder().timeSource(this.clock).build();
		RateLimiter limiter = store.limiter(RateLimitPolicy.of("p", Algorithm.GCRA, 10, Duration.ofSeconds(10)));
		for (int i = 0; i < 10; i++) {
			limiter.decide("early");
		}
		this.clock.advance(Duration.ofSeconds(5));
		for (int i = 0; i < 10; i++) {
			limiter.decide("late");
		}
		this.clock.advance(Duration.ofMillis(5500));
		store.forgetIdleKeys();
		assertThat(store.size()).isEqualTo(1);
		this.clock.advance(Duration.ofSeconds(5));
		store.forgetIdleKeys();
		assertThat(store.size()).isZero();
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void forgetsAKeyTheInstantItIsFullAgainAndNotBefore(Algorithm algorithm) {
		InMemoryRateLimitStore store = InMemoryRateLimitStore.builder().timeSource(this.clock).build();
		RateLimitPolicy policy = RateLimitPolicy.of("p", algorithm, 2, Duration.ofSeconds(10));
		store.limiter(policy).decide("k");
		store.limiter(policy).decide("k");
		this.clock.advance(policy.fullAfter().minusNanos(1000));
		store.forgetIdleKeys();
		assertThat(store.size()).as("a microsecond before it is full").isEqualTo(1);
		this.clock.advance(Duration.ofNanos(1000));
		store.forgetIdleKeys();
		assertThat(store.size()).as("once it is full").isZero();
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void forgetsAKeyOnlyInspectedAtOnce(Algorithm algorithm) {
		InMemoryRateLimitStore store = InMemoryRateLimitStore.builder().timeSource(this.clock).build();
		RateLimitPolicy policy = RateLimitPolicy.of("p", algorithm, 2, Duration.ofSeconds(10));
		this.clock.advance(Duration.ofSeconds(25));
		store.inspect("k", policy);
		assertThat(store.size()).isEqualTo(1);
		store.forgetIdleKeys();
		assertThat(store.size()).isZero();
	}

	@Test
	void keepsASlidingWindowCounterKeyWhilePermitsOfItsPreviousWindowStillCount() {
		InMemoryRateLimitStore store = InMemoryRateLimitStore.builder().timeSource(this.clock).build();
		RateLimiter limiter = store.limiter(RateLimitPolicy.of("p", Algorithm.SLIDING_WINDOW_COUNTER, 2,
				Duration.ofSeconds(10)));
		this.clock.set(Duration.ofSeconds(9).toNanos());
		limiter.decide("k");
		limiter.decide("k");
		// denied at the start of the next window, where the two of the previous one weigh in full
		this.clock.set(Duration.ofSeconds(10).toNanos());
		assertThat(limiter.decide("k").allowed()).isFalse();
		store.forgetIdleKeys();
		assertThat(store.size()).isEqualTo(1);
		assertThat(limiter.decide("k").allowed()).as("no fresh quota from a sweep").isFalse();
		this.clock.set(Duration.ofSeconds(20).toNanos() - 1000);
		store.forgetIdleKeys();
		assertThat(store.size()).isEqualTo(1);
		this.clock.set(Duration.ofSeconds(20).toNanos());
		store.forgetIdleKeys();
		assertThat(store.size()).isZero();
	}

	@Test
	void alignsFixedWindowsToTheInstantTheStoreWasBuilt() {
		this.clock.set(Duration.ofSeconds(7).toNanos());
		RateLimiter limiter = InMemoryRateLimitStore.builder().timeSource(this.clock).build()
			.limiter(RateLimitPolicy.of("p", Algorithm.FIXED_WINDOW, 1, Duration.ofSeconds(10)));
		assertThat(limiter.decide("k").resetAfter()).isEqualTo(Duration.ofSeconds(10));
		this.clock.set(Duration.ofSeconds(17).toNanos() - 1);
		assertThat(limiter.tryAcquire("k")).isFalse();
		this.clock.set(Duration.ofSeconds(17).toNanos());
		assertThat(limiter.tryAcquire("k")).isTrue();
	}

	@Test
	void keepsTheLimitersOfAPolicysFirstCostsAndGivesEveryFurtherCostOneOfItsOwn() {
		InMemoryRateLimitStore store = InMemoryRateLimitStore.builder().timeSource(this.clock).build();
		RateLimitPolicy policy = RateLimitPolicy.of("p", Algorithm.GCRA, 1000, Duration.ofSeconds(10));
		assertThat(store.limiter(policy)).isSameAs(store.limiter(policy));
		for (long cost = 2; cost < 2 + InMemoryRateLimitStore.MAX_COSTS; cost++) {
			assertThat(store.limiter(policy.withCost(cost))).as("cost %d", cost)
				.isSameAs(store.limiter(policy.withCost(cost)));
		}
		long further = 2 + InMemoryRateLimitStore.MAX_COSTS;
		RateLimiter once = store.limiter(policy.withCost(further));
		assertThat(once).isNotSameAs(store.limiter(policy.withCost(further)));
		// every cost still takes from the one quota of the key
		assertThat(once.decide("k").remaining()).isEqualTo(1000 - further);
		assertThat(store.limiter(policy.withCost(2)).decide("k").remaining()).isEqualTo(1000 - further - 2);
	}

	@Test
	void makesRoomUnderTheCapForANewKeyWhenAKeyIsReset() {
		InMemoryRateLimitStore store = InMemoryRateLimitStore.builder().timeSource(this.clock).maxKeys(2).build();
		RateLimitPolicy policy = RateLimitPolicy.of("p", Algorithm.GCRA, 2, Duration.ofSeconds(10));
		store.limiter(policy).decide("a");
		store.limiter(policy).decide("b");
		store.reset("a", policy);
		assertThat(store.size()).isEqualTo(1);
		store.limiter(policy).decide("c");
		assertThat(store.size()).as("c tracked on its own").isEqualTo(2);
	}

	@Test
	void makesRoomUnderTheCapAndFillsTheOverflowQuotaAgainWhenEveryKeyIsReset() {
		InMemoryRateLimitStore store = InMemoryRateLimitStore.builder().timeSource(this.clock).maxKeys(1).build();
		RateLimiter limiter = store.limiter(RateLimitPolicy.of("p", Algorithm.GCRA, 2, Duration.ofSeconds(10)));
		limiter.decide("a");
		assertThat(limiter.tryAcquire("b")).isTrue();
		assertThat(limiter.tryAcquire("c")).isTrue();
		assertThat(limiter.tryAcquire("d")).as("the overflow quota is spent").isFalse();
		store.resetAll().orElseThrow().resetAll();
		assertThat(store.size()).isZero();
		assertThat(limiter.decide("x").remaining()).as("x tracked on its own").isEqualTo(1);
		assertThat(limiter.decide("y").remaining()).as("the overflow quota, full again").isEqualTo(1);
		assertThat(store.size()).isEqualTo(1);
	}

	@Test
	void sweepsAFullStoreAgainOnceASecondHasPassedSinceItsLastSweep() {
		InMemoryRateLimitStore store = InMemoryRateLimitStore.builder().timeSource(this.clock).maxKeys(1).build();
		RateLimiter limiter = store.limiter(RateLimitPolicy.of("p", Algorithm.FIXED_WINDOW, 1, Duration.ofMillis(100)));
		assertThat(limiter.tryAcquire("a")).isTrue();
		this.clock.set(Duration.ofSeconds(1).toNanos());
		// a second after the store began: a, idle, is swept, and b takes its room
		assertThat(limiter.tryAcquire("b")).isTrue();
		this.clock.set(Duration.ofMillis(1500).toNanos());
		// half a second after that sweep: c and d share the overflow quota, although b is idle
		assertThat(limiter.tryAcquire("c")).isTrue();
		assertThat(limiter.tryAcquire("d")).isFalse();
	}

	@Test
	void carriesOverFromTheLastEightChangesAndNoFurther() {
		InMemoryRateLimitStore store = InMemoryRateLimitStore.builder().timeSource(this.clock).build();
		List<RateLimitPolicy> policies = new ArrayList<>();
		for (int i = 0; i <= RateLimitStore.MAX_CARRIED_CHANGES + 1; i++) {
			policies.add(RateLimitPolicy.of("p", Algorithm.GCRA, 10 + i, Duration.ofSeconds(10)));
		}
		RateLimiter first = store.limiter(policies.get(0));
		for (int i = 0; i < 5; i++) {
			first.decide("checked-after-eight");
			first.decide("checked-after-nine");
		}
		for (int i = 1; i <= RateLimitStore.MAX_CARRIED_CHANGES; i++) {
			store.change(policies.get(i - 1), policies.get(i));
		}
		RateLimitPolicy eighth = policies.get(RateLimitStore.MAX_CARRIED_CHANGES);
		// a change of the cost alone changes nothing, and takes no place among the eight
		store.change(eighth, eighth.withCost(2));
		assertThat(store.inspect("checked-after-eight", eighth).remaining()).as("carried over eight changes")
			.isEqualTo(eighth.limit() - 5);
		RateLimitPolicy ninth = policies.get(RateLimitStore.MAX_CARRIED_CHANGES + 1);
		store.change(eighth, ninth);
		assertThat(store.inspect("checked-after-nine", ninth).remaining()).as("not carried over nine")
			.isEqualTo(ninth.limit());
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void sweepsIdleKeysByItselfAsItGrowsButSparesKeysUsedSinceTheSweepBefore(Algorithm algorithm) {
		InMemoryRateLimitStore store = InMemoryRateLimitStore.builder().timeSource(this.clock).build();
		RateLimiter limiter = store.limiter(RateLimitPolicy.of("p", algorithm, 5, Duration.ofSeconds(1)));
		for (int i = 0; i < 1024; i++) {
			limiter.tryAcquire("first-" + i);
		}
		this.clock.advance(Duration.ofSeconds(3));
		// the store has doubled: it sweeps, but every key was used since it was created
		limiter.tryAcquire("second-0");
		assertThat(store.size()).isEqualTo(1025);
		this.clock.advance(Duration.ofSeconds(3));
		limiter.tryAcquire("first-0");
		for (int i = 1; i < 1025; i++) {
			limiter.tryAcquire("second-" + i);
		}
		this.clock.advance(Duration.ofSeconds(3));
		// the store doubled again on the way: the first keys left untouched since the last sweep were forgotten
		limiter.tryAcquire("third");
		assertThat(store.size()).as("first-0, the second keys and the third").isEqualTo(1 + 1025 + 1);
	}

	@Test
	void sharesOneOverflowQuotaAmongNewKeysAtTheCapAndKeepsTrackedKeysExact() {
		InMemoryRateLimitStore store = InMemoryRateLimitStore.builder().timeSource(this.clock).maxKeys(2).build();
		RateLimiter limiter = store.limiter(RateLimitPolicy.of("p", Algorithm.GCRA, 2, Duration.ofSeconds(10)));
		assertThat(limiter.tryAcquire("a")).isTrue();
		assertThat(limiter.tryAcquire("b")).isTrue();
		// the store is full: c, d and e share one quota of 2
		assertThat(limiter.tryAcquire("c")).isTrue();
		assertThat(limiter.tryAcquire("d")).isTrue();
		assertThat(limiter.tryAcquire("e")).isFalse();
		assertThat(store.size()).isEqualTo(2);
		// tracked keys keep their own quota
		assertThat(limiter.tryAcquire("a")).isTrue();
		assertThat(limiter.tryAcquire("a")).isFalse();
		// once a and b are idle, a sweep makes room for new keys again
		this.clock.advance(Duration.ofSeconds(11));
		Decision fresh = limiter.decide("f");
		assertThat(fresh.allowed()).isTrue();
		assertThat(fresh.remaining()).isEqualTo(1);
		assertThat(store.size()).isEqualTo(1);
	}

	@Test
	void givesExactlyItsCapOfKeysAQuotaOfTheirOwnUnderAFloodOfNewKeysFromManyThreads() throws Exception {
		int cap = 20_000;
		int threads = 4;
		int keysPerThread = 50_000;
		InMemoryRateLimitStore store = InMemoryRateLimitStore.builder().timeSource(this.clock).maxKeys(cap).build();
		RateLimiter limiter = store.limiter(RateLimitPolicy.of("flood", Algorithm.GCRA, 3, Duration.ofSeconds(10)));
		ExecutorService pool = Executors.newFixedThreadPool(threads);
		try {
			List<Future<Integer>> admitted = new ArrayList<>();
			for (int t = 0; t < threads; t++) {
				int thread = t;
				admitted.add(pool.submit(() -> {
					int allowed = 0;
					for (int i = 0; i < keysPerThread; i++) {
						allowed += limiter.tryAcquire("key-" + thread + "-" + i) ? 1 : 0;
					}
					return allowed;
				}));
			}
			int allowed = 0;
			for (Future<Integer> future : admitted) {
				allowed += future.get(60, TimeUnit.SECONDS);
			}
			// no key is full again at this instant, so none can be forgotten: the cap's keys have a quota each,
			// and the 180,000 others share one of 3
			assertThat(allowed).isEqualTo(cap + 3);
			assertThat(store.size()).isEqualTo(cap);
		}
		finally {
			pool.shutdownNow();
		}
	}

	@Test
	void capsEachPolicyOnItsOwnSoThatAFloodOnOneLeavesTheOthersExact() {
		InMemoryRateLimitStore store = InMemoryRateLimitStore.builder().timeSource(this.clock).maxKeys(3).build();
		RateLimiter flooded = store.limiter(RateLimitPolicy.of("flooded", Algorithm.GCRA, 2, Duration.ofSeconds(10)));
		RateLimiter other = store.limiter(RateLimitPolicy.of("other", Algorithm.GCRA, 2, Duration.ofSeconds(10)));
		assertThat(flooded.tryAcquire("known")).isTrue();
		for (int i = 0; i < 100; i++) {
			flooded.tryAcquire("made-up-" + i);
		}
		assertThat(store.size()).isEqualTo(3);
		Decision newcomer = other.decide("alice");
		assertThat(newcomer.allowed()).isTrue();
		assertThat(newcomer.remaining()).as("alice's own quota, not an overflow shared with the flood").isEqualTo(1);
		assertThat(other.tryAcquire("alice")).isTrue();
		assertThat(other.tryAcquire("alice")).isFalse();
		assertThat(other.decide("bob").remaining()).as("bob's own quota too").isEqualTo(1);
		assertThat(flooded.decide("known").remaining()).as("a known key of the flooded policy keeps its quota")
			.isZero();
	}

	@Test
	void boundsTheMemoryOfAFloodOfMadeUpKeysAndKeepsEveryOtherPolicyExact() {
		Runtime runtime = Runtime.getRuntime();
		long before = usedHeapAfterGc(runtime);
		InMemoryRateLimitStore store = InMemoryRateLimitStore.builder().timeSource(this.clock).build();
		RateLimiter flooded = store.limiter(RateLimitPolicy.of("api-key", Algorithm.GCRA, 10, Duration.ofMinutes(1)));
		RateLimiter user = store.limiter(RateLimitPolicy.of("user", Algorithm.GCRA, 5, Duration.ofMinutes(1)));
		assertThat(flooded.tryAcquire("known")).isTrue();
		for (int i = 0; i < 200_000; i++) {
			flooded.tryAcquire("key-" + i);
		}
		long used = usedHeapAfterGc(runtime) - before;
		assertThat(store.size()).as("the default cap of 100,000 keys per policy").isEqualTo(100_000);
		// 100,000 states with their map entries, and keys of up to 10 characters; the stream of keys is garbage
		assertThat(used).as("heap held by the flooded store, bytes").isLessThan(32L << 20);
		for (String name : new String[] { "alice", "bob", "carol" }) {
			Decision first = user.decide(name);
			assertThat(first.allowed()).isTrue();
			assertThat(first.remaining()).as("%s's own quota", name).isEqualTo(4);
		}
		assertThat(flooded.decide("known").remaining()).isEqualTo(8);
		assertThat(store.size()).isEqualTo(100_003);
	}

	private static long usedHeapAfterGc(Runtime runtime) {
		long used = Long.MAX_VALUE;
		// a few collections, since one may leave garbage that a concurrent phase had not reached yet
		for (int i = 0; i < 3; i++) {
			System.gc();
			used = Math.min(used, runtime.totalMemory() - runtime.freeMemory());
		}
		return used;
	}

	@Test
	void holdsAnOverflowStateThatTwoKeysOfAStackShareOnceAndChargesItOnce() {
		InMemoryRateLimitStore store = InMemoryRateLimitStore.builder().timeSource(this.clock).maxKeys(1).build();
		RateLimitPolicy policy = RateLimitPolicy.of("p", Algorithm.GCRA, 2, Duration.ofSeconds(10));
		RateLimiter limiter = store.limiter(policy);
		limiter.tryAcquire("tracked");
		List<Decision> both = store.decideAll(List.of(new KeyedPolicy("b", policy), new KeyedPolicy("c", policy)));
		assertThat(both).extracting(Decision::remaining).containsExactly(1L, 1L);
		assertThat(limiter.tryAcquire("d")).isTrue();
		assertThat(limiter.tryAcquire("e")).isFalse();
	}

	@Test
	void holdsTheStatesOfStacksOnSeveralKeysInOneOrderWhateverOrderTheyAreNamedIn() throws Exception {
		InMemoryRateLimitStore store = InMemoryRateLimitStore.builder().timeSource(this.clock).build();
		RateLimitPolicy log = RateLimitPolicy.of("log", Algorithm.SLIDING_LOG, 100_000, Duration.ofSeconds(10));
		RateLimitPolicy gcra = RateLimitPolicy.of("gcra", Algorithm.GCRA, 100_000, Duration.ofSeconds(10));
		List<KeyedPolicy> limits = List.of(new KeyedPolicy("x", log), new KeyedPolicy("y", log),
				new KeyedPolicy("x", gcra), new KeyedPolicy("shared", gcra));
		ExecutorService threads = Executors.newFixedThreadPool(8);
		try {
			List<Future<?>> runs = new ArrayList<>();
			for (int thread = 0; thread < 8; thread++) {
				Random random = new Random(thread);
				runs.add(threads.submit(() -> {
					for (int request = 0; request < 2_000; request++) {
						List<KeyedPolicy> stack = new ArrayList<>(limits);
						Collections.shuffle(stack, random);
						assertThat(store.decideAll(stack.subList(0, 2 + random.nextInt(3))).get(0).allowed()).isTrue();
					}
				}));
			}
			for (Future<?> run : runs) {
				// a cycle of stacks waiting for each other would never end
				run.get(60, TimeUnit.SECONDS);
			}
		}
		finally {
			threads.shutdownNow();
		}
	}

	@Test
	void doesNotSweepAFullStoreMoreThanOnceASecond() {
		InMemoryRateLimitStore store = InMemoryRateLimitStore.builder().timeSource(this.clock).maxKeys(1).build();
		RateLimiter limiter = store.limiter(RateLimitPolicy.of("p", Algorithm.FIXED_WINDOW, 1, Duration.ofMillis(100)));
		limiter.tryAcquire("a");
		this.clock.advance(Duration.ofMillis(200));
		assertThat(limiter.tryAcquire("b")).as("a is idle and swept").isTrue();
		this.clock.advance(Duration.ofMillis(200));
		// b is idle too, but the last sweep was 200 ms ago: c goes to the overflow quota
		assertThat(limiter.tryAcquire("c")).isTrue();
		assertThat(limiter.tryAcquire("c")).isFalse();
		this.clock.advance(Duration.ofSeconds(1));
		assertThat(limiter.tryAcquire("d")).isTrue();
		assertThat(limiter.tryAcquire("d")).as("d is tracked on its own now").isFalse();
		assertThat(limiter.tryAcquire("e")).as("the overflow quota is idle again").isTrue();
	}

	@Test
	void rejectsANonPositiveCap() {
		assertThatIllegalArgumentException().isThrownBy(() -> InMemoryRateLimitStore.builder().maxKeys(0))
			.withMessageContaining("maxKeys");
	}

	@ParameterizedTest
	@EnumSource(value = Algorithm.class, names = { "GCRA", "TOKEN_BUCKET", "LEAKY_BUCKET" })
	void aKeyBusyPastTheSpanItsWordCountsKeepsItsState(Algorithm algorithm) {
		// 999,983 is prime: each microsecond is 999,983 ticks, so the word spans 53 days from the key's creation
		long limit = 999_983;
		RateLimitPolicy policy = new RateLimitPolicy("p", algorithm, limit, Duration.ofSeconds(1), limit, limit, 0);
		long span = new Rules(policy, 0).arrivalSpan;
		assertThat(Duration.ofNanos(span * 1000)).isLessThan(Duration.ofDays(60));
		InMemoryRateLimitStore store = InMemoryRateLimitStore.builder().timeSource(this.clock).build();
		RateLimiter limiter = store.limiter(policy);
		assertThat(limiter.tryAcquire("busy")).isTrue();
		// keys seen again only at the end, by a limiter and by a stack that only this policy can deny
		assertThat(limiter.tryAcquire("back")).isTrue();
		assertThat(limiter.decide("decided").allowed()).isTrue();
		List<RateLimitPolicy> lenient = List.of(policy, RateLimitPolicy.of("lenient", Algorithm.FIXED_WINDOW, 1000,
				Duration.ofSeconds(1)));
		assertThat(store.decideAll("stacked", lenient)).allMatch(Decision::allowed);
		this.clock.set((span - 1000) * 1000);
		assertThat(limiter.tryAcquire("busy")).isTrue();
		// two milliseconds on, past the span: the bucket is still all but empty
		this.clock.advance(Duration.ofMillis(2));
		Decision denied = limiter.decide("busy");
		assertThat(denied.allowed()).isFalse();
		assertThat(denied.retryAfterNanos()).isGreaterThan(Duration.ofMillis(990).toNanos());
		this.clock.advance(Duration.ofSeconds(1));
		assertThat(limiter.tryAcquire("busy")).isTrue();
		assertThat(limiter.tryAcquire("busy")).isFalse();
		assertThat(store.size()).as("busy, back, decided and stacked under both policies").isEqualTo(5);
		// a stacked decision rebases too
		this.clock.advance(Duration.ofNanos(span * 1000));
		List<RateLimitPolicy> stack = List.of(policy, RateLimitPolicy.of("q", Algorithm.SLIDING_LOG, 1,
				Duration.ofSeconds(1)));
		assertThat(store.decideAll("busy", stack)).allMatch(Decision::allowed);
		assertThat(store.decideAll("busy", stack)).noneMatch(Decision::allowed);
		// half a second before ticks counted from the store's start would overflow a long
		this.clock.set((Long.MAX_VALUE / limit - 500_000) * 1000);
		assertThat(limiter.tryAcquire("busy")).isTrue();
		assertThat(limiter.tryAcquire("back")).isTrue();
		assertThat(limiter.decide("decided").allowed()).isTrue();
		assertThat(store.decideAll("stacked", lenient)).allMatch(Decision::allowed);
		this.clock.advance(Duration.ofMillis(1));
		assertThat(limiter.tryAcquire("busy")).isFalse();
		assertThat(limiter.tryAcquire("back")).isFalse();
		assertThat(limiter.decide("decided").allowed()).isFalse();
		assertThat(store.decideAll("stacked", lenient).get(1).remaining()).as("the lenient policy's room")
			.isPositive();
		assertThat(store.decideAll("stacked", lenient)).noneMatch(Decision::allowed);
	}

	@Test
	void anOverflowQuotaBusyPastTheSpanItsWordCountsKeepsItsState() {
		long limit = 999_983;
		RateLimitPolicy policy = new RateLimitPolicy("p", Algorithm.GCRA, limit, Duration.ofSeconds(1), limit, limit, 0);
		long span = new Rules(policy, 0).arrivalSpan;
		InMemoryRateLimitStore store = InMemoryRateLimitStore.builder().timeSource(this.clock).maxKeys(1).build();
		RateLimiter limiter = store.limiter(policy);
		assertThat(limiter.tryAcquire("tracked")).isTrue();
		assertThat(limiter.tryAcquire("untracked")).isTrue();
		this.clock.set((span + 1000) * 1000);
		// the tracked key stays busy, so that the untracked one finds no room and takes the overflow quota
		assertThat(limiter.tryAcquire("tracked")).isTrue();
		assertThat(limiter.tryAcquire("untracked")).isTrue();
		assertThat(store.size()).isEqualTo(1);
		this.clock.advance(Duration.ofMillis(1));
		assertThat(limiter.tryAcquire("other-untracked")).isFalse();
	}

	@ParameterizedTest
	@EnumSource(value = Algorithm.class, names = { "GCRA", "TOKEN_BUCKET", "LEAKY_BUCKET" })
	void aKeyIdleForTwiceTheSpanItsWordCountsIsFullAgain(Algorithm algorithm) {
		long limit = 999_983;
		RateLimitPolicy policy = new RateLimitPolicy("p", algorithm, limit, Duration.ofSeconds(1), limit, limit, 0);
		long span = new Rules(policy, 0).arrivalSpan;
		InMemoryRateLimitStore store = InMemoryRateLimitStore.builder().timeSource(this.clock).build();
		RateLimiter limiter = store.limiter(policy);
		assertThat(limiter.tryAcquire("idle")).isTrue();
		assertThat(limiter.decide("changed").allowed()).isTrue();
		// untouched for three spans: in ticks since the key's creation, now no longer fits a long
		this.clock.set(3 * span * 1000);
		Decision full = limiter.decide("idle");
		assertThat(full.allowed()).isTrue();
		assertThat(full.retryAfterNanos()).isZero();
		assertThat(limiter.tryAcquire("idle")).isFalse();
		RateLimitPolicy raised = new RateLimitPolicy("p", algorithm, limit + 2, Duration.ofSeconds(1), limit + 2,
				limit, 0);
		store.change(policy, raised);
		assertThat(store.inspect("changed", raised)).as("a key that carries nothing over")
			.isEqualTo(store.inspect("new", raised));
	}

	@Test
	void aFixedWindowKeyPastTheWindowsItsWordCountsKeepsCounting() {
		// a count of up to 2^40 leaves the word 2^21 windows, 35 minutes of one-millisecond windows
		long limit = 1L << 40;
		RateLimitPolicy policy = new RateLimitPolicy("p", Algorithm.FIXED_WINDOW, limit, Duration.ofMillis(1), limit,
				limit / 2, 0);
		long lastWindow = new Rules(policy, 0).maxWindowIndex;
		assertThat(lastWindow).isEqualTo((1L << 21) - 1);
		InMemoryRateLimitStore store = InMemoryRateLimitStore.builder().timeSource(this.clock).build();
		RateLimiter limiter = store.limiter(policy);
		assertThat(limiter.tryAcquire("busy")).isTrue();
		this.clock.set(lastWindow * 1_000_000);
		assertThat(limiter.tryAcquire("busy")).isTrue();
		assertThat(limiter.tryAcquire("busy")).isTrue();
		assertThat(limiter.tryAcquire("busy")).isFalse();
		this.clock.advance(Duration.ofMillis(1));
		assertThat(limiter.tryAcquire("busy")).isTrue();
		assertThat(limiter.decide("busy").remaining()).isZero();
		assertThat(limiter.tryAcquire("busy")).isFalse();
		assertThat(store.size()).isEqualTo(1);
		// four times as many windows on: the window's index no longer fits the word, a fresh base does
		this.clock.set((lastWindow + 1 + (1L << 23)) * 1_000_000);
		assertThat(limiter.tryAcquire("busy")).isTrue();
		assertThat(limiter.tryAcquire("busy")).isTrue();
		assertThat(limiter.tryAcquire("busy")).isFalse();
	}

}
