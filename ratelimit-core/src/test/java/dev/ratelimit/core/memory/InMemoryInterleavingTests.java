package dev.ratelimit.core.memory;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.Decision;
import dev.ratelimit.core.KeyedPolicy;
import dev.ratelimit.core.ManualTimeSource;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.TimeSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The interleavings that concurrency tests meet only now and then, forced on every run. A clock that runs a task
 * when a decision reads it puts a reset, a sweep or another decision right inside that decision, on the same
 * thread. A state that the test holds, as a stacked decision or a sweep holds it, shows what a decision on
 * another thread does meanwhile: it waits, parking after two lost tries as the store does, without reading the
 * time or touching the state, and whatever it holds while it waits is in the store's one order.
 */
class InMemoryInterleavingTests {

	private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

	private final SteppingClock clock = new SteppingClock();

	private final InMemoryRateLimitStore store = InMemoryRateLimitStore.builder().timeSource(this.clock).build();

	enum Forgetting {

		RESET, SWEEP

	}

	enum Call {

		DECIDE((limiter) -> limiter.decide("k").allowed()), TRY_ACQUIRE((limiter) -> limiter.tryAcquire("k"));

		final Function<PolicyTable, Boolean> run;

		Call(Function<PolicyTable, Boolean> run) {
			this.run = run;
		}

	}

	static Stream<Arguments> forgettings() {
		return Stream.of(Algorithm.values())
			.flatMap((algorithm) -> Stream.of(Forgetting.values())
				.flatMap((forgetting) -> Stream.of(Call.values())
					.map((call) -> Arguments.of(algorithm, forgetting, call))));
	}

	@ParameterizedTest(name = "{0}, {1}, {2}")
	@MethodSource("forgettings")
	void aDecisionWhoseStateIsForgottenWhileItDecidesDecidesOnTheKeysNewState(Algorithm algorithm,
			Forgetting forgetting, Call call) {
		RateLimitPolicy policy = RateLimitPolicy.of("p", algorithm, 3, Duration.ofSeconds(10));
		PolicyTable limiter = table(policy);
		limiter.decide("reference");
		this.clock.onNextRead(forget("k", policy, forgetting));
		assertThat(call.run.apply(limiter)).isTrue();
		assertThat(this.store.inspect("k", policy)).as("one request taken since the key was forgotten")
			.isEqualTo(this.store.inspect("reference", policy));
	}

	@ParameterizedTest(name = "{0}, {1}")
	@MethodSource("stackedForgettings")
	void aStackedDecisionWhoseStateIsForgottenWhileItLooksUpAnotherDecidesOnTheKeysNewState(Algorithm algorithm,
			Forgetting forgetting) {
		RateLimitPolicy first = RateLimitPolicy.of("first", algorithm, 3, Duration.ofSeconds(10));
		RateLimitPolicy second = RateLimitPolicy.of("second", algorithm, 3, Duration.ofSeconds(10));
		// the first policy's states are held first: the forgotten state is held after another
		table(first).decide("reference");
		table(second).decide("reference");
		// the stack looks the known key up, then the new one, which reads the time
		this.clock.onNextRead(forget("known", second, forgetting));
		List<Decision> decisions = this.store
			.decideAll(List.of(new KeyedPolicy("known", second), new KeyedPolicy("new", first)));
		assertThat(decisions).allMatch(Decision::allowed);
		assertThat(this.store.inspect("known", second)).isEqualTo(this.store.inspect("reference", second));
		assertThat(this.store.inspect("new", first)).isEqualTo(this.store.inspect("reference", first));
	}

	static Stream<Arguments> stackedForgettings() {
		return Stream.of(Algorithm.values())
			.flatMap((algorithm) -> Stream.of(Forgetting.values()).map((forgetting) -> Arguments.of(algorithm, forgetting)));
	}

	/** Takes one request from {@code key}, or only looks it up, and returns the task that forgets it. */
	private Runnable forget(String key, RateLimitPolicy policy, Forgetting forgetting) {
		if (forgetting == Forgetting.RESET) {
			table(policy).decide(key);
			return () -> this.store.reset(key, policy);
		}
		// a key only looked up is idle, and the sweep forgets it
		this.store.inspect(key, policy);
		return this.store::forgetIdleKeys;
	}

	@ParameterizedTest
	@EnumSource(names = { "TOKEN_BUCKET", "LEAKY_BUCKET", "GCRA" })
	void aDecisionWhoseKeyAnotherRebasesMeanwhileDecidesOnTheNewState(Algorithm algorithm) {
		// 999,983 is prime: each microsecond is 999,983 ticks, so the word spans 53 days from the key's creation
		RateLimitPolicy policy = RateLimitPolicy.of("p", algorithm, 999_983, Duration.ofSeconds(1));
		PolicyTable limiter = table(policy);
		limiter.decide("busy");
		this.clock.clock.set((new Rules(policy, 0).arrivalSpan + 1000) * 1000);
		this.clock.onNextRead(() -> limiter.decide("busy"));
		assertThat(limiter.decide("busy").allowed()).isTrue();
		limiter.decide("reference");
		limiter.decide("reference");
		assertThat(this.store.inspect("busy", policy)).isEqualTo(this.store.inspect("reference", policy));
	}

	@ParameterizedTest(name = "after a change: {0}")
	@ValueSource(booleans = { false, true })
	void countsAKeyThatTwoFirstRequestsCreateAtOnceAsOneKey(boolean changed) {
		InMemoryRateLimitStore store = InMemoryRateLimitStore.builder().timeSource(this.clock).maxKeys(2).build();
		RateLimitPolicy policy = RateLimitPolicy.of("p", Algorithm.GCRA, 2, Duration.ofSeconds(10));
		if (changed) {
			// a key the new policy has not seen is created with what it carries over
			store.change(RateLimitPolicy.of("p", Algorithm.GCRA, 3, Duration.ofSeconds(10)), policy);
		}
		PolicyTable limiter = (PolicyTable) store.limiter(policy);
		this.clock.onNextRead(() -> limiter.decide("k"));
		limiter.decide("k");
		assertThat(store.size()).isEqualTo(1);
		limiter.decide("other");
		assertThat(store.size()).as("a new key, tracked on its own under the cap").isEqualTo(2);
	}

	@ParameterizedTest(name = "{0}, {1}")
	@MethodSource("packedDecisions")
	void aDecisionWaitsForAKeyThatAStackOrASweepHolds(Algorithm algorithm, Call call) {
		RateLimitPolicy policy = RateLimitPolicy.of("p", algorithm, 3, Duration.ofSeconds(10));
		PolicyTable limiter = table(policy);
		limiter.decide("k");
		limiter.decide("reference");
		limiter.decide("reference");
		KeyState state = limiter.keys.state("k");
		AtomicReference<Boolean> allowed = new AtomicReference<>();
		whileHeld(state, true, () -> allowed.set(call.run.apply(limiter)), () -> {
			assertThat(state.word()).as("the held word").isEqualTo(KeyState.HELD);
		});
		assertThat(allowed.get()).isTrue();
		assertThat(this.store.inspect("k", policy)).isEqualTo(this.store.inspect("reference", policy));
	}

	static Stream<Arguments> packedDecisions() {
		return Stream.of(Algorithm.FIXED_WINDOW, Algorithm.TOKEN_BUCKET, Algorithm.LEAKY_BUCKET, Algorithm.GCRA)
			.flatMap((algorithm) -> Stream.of(Call.values()).map((call) -> Arguments.of(algorithm, call)));
	}

	@ParameterizedTest(name = "the later policy named first: {0}")
	@ValueSource(booleans = { false, true })
	void aStackedDecisionHoldsOneKeysStatesInTheOrderOfItsPoliciesWhateverOrderItNamesThemIn(boolean laterFirst) {
		RateLimitPolicy gcra = RateLimitPolicy.of("gcra", Algorithm.GCRA, 3, Duration.ofSeconds(10));
		RateLimitPolicy log = RateLimitPolicy.of("log", Algorithm.SLIDING_LOG, 3, Duration.ofSeconds(10));
		// the first policy the store meets comes first in its order
		PolicyTable earlier = table(gcra);
		PolicyTable later = table(log);
		List<RateLimitPolicy> named = laterFirst ? List.of(log, gcra) : List.of(gcra, log);
		this.store.decideAll("k", named);
		this.store.decideAll("reference", named);
		this.store.decideAll("reference", named);
		KeyState earlierState = earlier.keys.state("k");
		AtomicReference<List<Decision>> decisions = new AtomicReference<>();
		whileHeld(later.keys.state("k"), true, () -> decisions.set(this.store.decideAll("k", named)), () -> {
			// waiting for the later state, it holds the earlier one: a stack waiting the other way round would
			// hold the later one and wait for the earlier one
			assertThat(earlierState.word()).as("the word of the state held first").isEqualTo(KeyState.HELD);
		});
		assertThat(decisions.get()).allMatch(Decision::allowed);
		assertThat(this.store.inspect("k", gcra)).isEqualTo(this.store.inspect("reference", gcra));
		assertThat(this.store.inspect("k", log)).isEqualTo(this.store.inspect("reference", log));
	}

	@ParameterizedTest(name = "the later key named first: {0}")
	@ValueSource(booleans = { false, true })
	void aStackedDecisionHoldsOnePolicysStatesInTheOrderOfTheirKeysWhateverOrderItNamesThemIn(boolean laterFirst) {
		RateLimitPolicy policy = RateLimitPolicy.of("p", Algorithm.GCRA, 3, Duration.ofSeconds(10));
		PolicyTable table = table(policy);
		List<KeyedPolicy> named = laterFirst ? List.of(new KeyedPolicy("b", policy), new KeyedPolicy("a", policy))
				: List.of(new KeyedPolicy("a", policy), new KeyedPolicy("b", policy));
		this.store.decideAll(named);
		KeyState earlierState = table.keys.state("a");
		AtomicReference<List<Decision>> decisions = new AtomicReference<>();
		whileHeld(table.keys.state("b"), true, () -> decisions.set(this.store.decideAll(named)), () -> {
			assertThat(earlierState.word()).as("the word of the key held first").isEqualTo(KeyState.HELD);
		});
		assertThat(decisions.get()).allMatch(Decision::allowed);
		assertThat(this.store.inspect("a", policy).remaining()).isEqualTo(1);
		assertThat(this.store.inspect("b", policy).remaining()).isEqualTo(1);
	}

	@Test
	void aThreadThatAskedForAStageWaitsForAHeldKeyOnItsNextDecision() {
		RateLimitPolicy policy = RateLimitPolicy.of("p", Algorithm.GCRA, 3, Duration.ofSeconds(10));
		PolicyTable limiter = table(policy);
		limiter.decide("k");
		AtomicReference<Boolean> allowed = new AtomicReference<>();
		// an event loop's thread: its stage never parks, but what it asks for afterwards is decided as usual
		whileHeld(limiter.keys.state("k"), false, () -> {
			this.store.decideAllAsync(List.of(new KeyedPolicy("other", policy))).toCompletableFuture().join();
			allowed.set(limiter.tryAcquire("k"));
		}, () -> {
		});
		assertThat(allowed.get()).isTrue();
	}

	private PolicyTable table(RateLimitPolicy policy) {
		return (PolicyTable) this.store.limiter(policy);
	}

	/**
	 * Holds {@code state} as a stacked decision or a sweep would, runs {@code decision} on a thread of its own until
	 * it waits for the state, checks {@code meanwhile}, then gives the state back and lets the decision finish.
	 * A decision that finishes while the state is held fails, and so does one that reads the time meanwhile when
	 * {@code readsNoTime} is set: a decision reads it only once it has the state.
	 */
	private void whileHeld(KeyState state, boolean readsNoTime, Runnable decision, Runnable meanwhile) {
		AtomicReference<Throwable> failure = new AtomicReference<>();
		Thread decider = new Thread(() -> {
			try {
				decision.run();
			}
			catch (Throwable ex) {
				failure.set(ex);
			}
		}, "decider");
		long word = state.hold();
		try {
			this.clock.readsBy(decider);
			decider.start();
			long giveUp = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
			while (waits(decider) == 0 && decider.isAlive() && System.nanoTime() < giveUp) {
				Thread.onSpinWait();
			}
			assertThat(decider.isAlive()).as("a decision still at work while the state is held").isTrue();
			assertThat(waits(decider)).as("times the decision parked for the held state").isPositive();
			if (readsNoTime) {
				assertThat(this.clock.reads()).as("times the decision read the time while the state was held").isZero();
			}
			meanwhile.run();
		}
		finally {
			state.release(word);
		}
		try {
			decider.join(TimeUnit.SECONDS.toMillis(30));
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new AssertionError(ex);
		}
		assertThat(failure.get()).isNull();
		assertThat(decider.isAlive()).as("a decision still at work once the state was given back").isFalse();
	}

	private static long waits(Thread thread) {
		ThreadInfo info = THREADS.getThreadInfo(thread.getId());
		return (info != null) ? info.getWaitedCount() : 0;
	}

	/**
	 * A manual clock that runs a task the next time it is read, and counts the reads of one thread until that
	 * thread is told.
	 */
	static final class SteppingClock implements TimeSource {

		final ManualTimeSource clock = new ManualTimeSource();

		private Runnable next;

		private volatile Thread counted;

		private final AtomicInteger reads = new AtomicInteger();

		void onNextRead(Runnable task) {
			this.next = task;
		}

		void readsBy(Thread thread) {
			this.reads.set(0);
			this.counted = thread;
		}

		int reads() {
			return this.reads.get();
		}

		@Override
		public long nanoTime() {
			if (Thread.currentThread() == this.counted) {
				this.reads.incrementAndGet();
			}
			Runnable task = this.next;
			this.next = null;
			if (task != null) {
				task.run();
			}
			return this.clock.nanoTime();
		}

	}

}
