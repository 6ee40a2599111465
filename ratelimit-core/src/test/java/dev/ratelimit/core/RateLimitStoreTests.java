package dev.ratelimit.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatNoException;

/**
 * The checks every store runs on what it is given, and the asynchronous methods of a store that never waits, as
 * the interface gives them to it.
 */
class RateLimitStoreTests {

	private static final RateLimitPolicy POLICY = RateLimitPolicy.of("api", Algorithm.GCRA, 10,
			Duration.ofSeconds(10));

	private static final Decision TAKEN = new Decision(true, 10, 9, 0, 1_000_000_000, 0, 0);

	@Test
	void tellsWhetherAChangeChangesAnythingButTheCost() {
		assertThat(RateLimitStore.checkChange(POLICY, POLICY.withCost(3))).isFalse();
		assertThat(RateLimitStore.checkChange(POLICY, POLICY)).isFalse();
		assertThat(RateLimitStore.checkChange(POLICY, POLICY.withBurst(20))).isTrue();
		assertThat(RateLimitStore.checkChange(POLICY,
				RateLimitPolicy.of("api", Algorithm.GCRA, 10, Duration.ofSeconds(20)))).isTrue();
	}

	@Test
	void rejectsAStackWithoutLimits() {
		assertThatIllegalArgumentException().isThrownBy(() -> RateLimitStore.checkStack(List.of()))
			.withMessageContaining("At least one policy");
		assertThatNoException().isThrownBy(() -> RateLimitStore.checkStack(List.of(new KeyedPolicy("k", POLICY))));
	}

	@Test
	void rejectsAGiveBackThatAStackWouldNotAccept() {
		assertThatIllegalArgumentException().isThrownBy(() -> RateLimitStore.checkGiveBack(List.of(), List.of()))
			.withMessageContaining("At least one policy");
		KeyedPolicy limit = new KeyedPolicy("k", POLICY);
		assertThatIllegalArgumentException()
			.isThrownBy(() -> RateLimitStore.checkGiveBack(List.of(limit, limit), List.of(TAKEN, TAKEN)))
			.withMessageContaining("'api' appears twice on key 'k'");
	}

	@Test
	void rejectsAGiveBackWithoutOneDecisionPerLimit() {
		List<KeyedPolicy> limits = List.of(new KeyedPolicy("k", POLICY));
		assertThatIllegalArgumentException().isThrownBy(() -> RateLimitStore.checkGiveBack(limits, List.of()))
			.withMessage("Expected one decision per limit, 1, got 0");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> RateLimitStore.checkGiveBack(limits, List.of(TAKEN, TAKEN)))
			.withMessage("Expected one decision per limit, 1, got 2");
		assertThatNoException().isThrownBy(() -> RateLimitStore.checkGiveBack(limits, List.of(TAKEN)));
	}

	@Test
	void givesBackAtOnceOnTheCallingThreadByDefault() {
		RecordingStore store = new RecordingStore();
		List<KeyedPolicy> limits = List.of(new KeyedPolicy("k", POLICY));
		assertThat(store.giveBackAsync(limits, List.of(TAKEN))).isCompleted();
		assertThat(store.givenBack).containsExactly(List.of(TAKEN));
		assertThat(store.threads).containsExactly(Thread.currentThread());
	}

	@Test
	void failsTheStageWithWhatAGiveBackThrowsByDefault() {
		RecordingStore store = new RecordingStore();
		assertThat(store.giveBackAsync(List.of(new KeyedPolicy("k", POLICY)), List.of()).toCompletableFuture())
			.failsWithin(Duration.ZERO)
			.withThrowableThat()
			.havingRootCause()
			.isInstanceOf(IllegalArgumentException.class);
		assertThat(store.givenBack).isEmpty();
	}

	@Test
	void decidesAtOnceOnTheCallingThreadByDefault() {
		RecordingStore store = new RecordingStore();
		assertThat(store.decideAllAsync(List.of(new KeyedPolicy("k", POLICY))))
			.isCompletedWithValue(List.of(TAKEN));
		assertThat(store.decideAllAsync(List.of()).toCompletableFuture().handle((decisions, ex) -> ex).join())
			.isInstanceOf(IllegalArgumentException.class);
		assertThat(store.threads).containsExactly(Thread.currentThread(), Thread.currentThread());
	}

	@Test
	void decidesEveryPolicyOfAKeyAsAStack() {
		RecordingStore store = new RecordingStore();
		RateLimitPolicy other = RateLimitPolicy.of("other", Algorithm.FIXED_WINDOW, 5, Duration.ofSeconds(1));
		store.decideAll("k", List.of(POLICY, other));
		assertThat(store.decided).containsExactly(List.of(new KeyedPolicy("k", POLICY), new KeyedPolicy("k", other)));
	}

	/** Decides every limit as {@link #TAKEN} and records what it was asked, on which thread. */
	private static final class RecordingStore implements RateLimitStore {

		final List<List<KeyedPolicy>> decided = new ArrayList<>();

		final List<List<Decision>> givenBack = new ArrayList<>();

		final List<Thread> threads = new ArrayList<>();

		@Override
		public List<Decision> decideAll(List<KeyedPolicy> limits) {
			this.threads.add(Thread.currentThread());
			RateLimitStore.checkStack(limits);
			this.decided.add(limits);
			return limits.stream().map((limit) -> TAKEN).toList();
		}

		@Override
		public void giveBack(List<KeyedPolicy> limits, List<Decision> decisions) {
			this.threads.add(Thread.currentThread());
			RateLimitStore.checkGiveBack(limits, decisions);
			this.givenBack.add(decisions);
		}

		@Override
		public RateLimiter limiter(RateLimitPolicy policy) {
			throw new UnsupportedOperationException();
		}

		@Override
		public Decision inspect(String key, RateLimitPolicy policy) {
			throw new UnsupportedOperationException();
		}

		@Override
		public void reset(String key, RateLimitPolicy policy) {
			throw new UnsupportedOperationException();
		}

		@Override
		public void change(RateLimitPolicy from, RateLimitPolicy to) {
			throw new UnsupportedOperationException();
		}

	}

}
