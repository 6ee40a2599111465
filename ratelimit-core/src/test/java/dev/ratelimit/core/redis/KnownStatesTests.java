package dev.ratelimit.core.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeoutException;

import org.junit.jupiter.api.Test;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.Decision;
import dev.ratelimit.core.KeyedPolicy;
import dev.ratelimit.core.ManualTimeSource;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.internal.FailureKind;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What an instance knows of a key from Redis' replies, from which the failure policy decides: Redis' last word,
 * less what Redis may have granted since without the instance knowing.
 */
class KnownStatesTests {

	private static final RateLimitPolicy POLICY = RateLimitPolicy.of("api", Algorithm.FIXED_WINDOW, 10,
			Duration.ofMinutes(1));

	private static final List<KeyedPolicy> LIMITS = List.of(new KeyedPolicy("k", POLICY));

	private final ManualTimeSource clock = new ManualTimeSource(0);

	private final KnownStates states = new KnownStates(this.clock::nanoTime);

	@Test
	void keepsTheFewestPermitsLeftOfRepliesToCallsThatWereUnderWayAtOnce() {
		List<KnownStates.Known> first = this.states.sending(LIMITS);
		List<KnownStates.Known> second = this.states.sending(LIMITS);
		this.clock.advance(Duration.ofMillis(1));
		// the later of the two calls arrives first
		this.states.answered(second, List.of(left(7)), 0);
		this.states.answered(first, List.of(left(8)), 0);
		assertThat(this.states.tracked("k", POLICY).left(1)).isEqualTo(7);
	}

	@Test
	void takesTheReplyToACallSentAfterTheLastReplyArrivedWhateverItSays() {
		this.states.answered(this.states.sending(LIMITS), List.of(left(3)), 0);
		this.clock.advance(Duration.ofMillis(1));
		this.states.answered(this.states.sending(LIMITS), List.of(left(5)), this.clock.nanoTime());
		assertThat(this.states.tracked("k", POLICY).left(1)).isEqualTo(5);
	}

	@Test
	void countsACallUnderWayAsTakenUntilItsReplyComes() {
		this.states.answered(this.states.sending(LIMITS), List.of(left(6)), 0);
		this.clock.advance(Duration.ofMillis(1));
		List<KnownStates.Known> underWay = this.states.sending(LIMITS);
		assertThat(this.states.tracked("k", POLICY).left(1)).isEqualTo(5);
		// of 6 left, a third each among three instances, less the call under way
		assertThat(this.states.tracked("k", POLICY).left(3)).isEqualTo(1);
		this.states.answered(underWay, List.of(left(5)), this.clock.nanoTime());
		assertThat(this.states.tracked("k", POLICY).left(1)).isEqualTo(5);
	}

	@Test
	void countsACallThatFailedAsTakenUntilALaterCallIsAnsweredUnlessItWasNeverSent() {
		this.states.answered(this.states.sending(LIMITS), List.of(left(6)), 0);
		this.clock.advance(Duration.ofMillis(1));
		KnownStates.failed(this.states.sending(LIMITS), this.clock.nanoTime(), new ScriptCaller.CallFailure(
				FailureKind.SLOW, new TimeoutException("no reply"), this.clock.nanoTime()));
		KnownStates.failed(this.states.sending(LIMITS), this.clock.nanoTime(),
				new ScriptCaller.CallFailure(FailureKind.UNREACHABLE,
						new ScriptNotSentException(ScriptNotSentException.Reason.UNREACHABLE, "refused", null),
						this.clock.nanoTime()));
		KnownStates.failed(this.states.sending(LIMITS), this.clock.nanoTime(),
				new ScriptCaller.CallFailure(FailureKind.SLOW,
						new IllegalStateException("LATE the caller stopped waiting"), this.clock.nanoTime()));
		assertThat(this.states.tracked("k", POLICY).left(1)).as("only the call Redis may have run").isEqualTo(5);
		this.clock.advance(Duration.ofMillis(1));
		this.states.answered(this.states.sending(LIMITS), List.of(left(4)), this.clock.nanoTime());
		assertThat(this.states.tracked("k", POLICY).left(1)).isEqualTo(4);
	}

	@Test
	void keepsWhatItAdmittedWithoutRedisUntilTheKeyIsFullAgain() {
		this.states.answered(this.states.sending(LIMITS), List.of(left(6)), 0);
		KnownStates.Known known = this.states.tracked("k", POLICY);
		assertThat(known.take(4, 1)).isTrue();
		assertThat(known.take(3, 1)).isFalse();
		this.clock.advance(Duration.ofMillis(1));
		// Redis never heard of the 4: they still count against its new word
		this.states.answered(this.states.sending(LIMITS), List.of(left(6)), this.clock.nanoTime());
		assertThat(known.left(1)).isEqualTo(2);
		this.clock.advance(POLICY.window());
		assertThat(this.states.tracked("k", POLICY).holds(this.clock.nanoTime()))
			.as("full again: Redis' word no longer holds").isFalse();
		this.states.answered(this.states.sending(LIMITS), List.of(left(9)), this.clock.nanoTime());
		assertThat(this.states.tracked("k", POLICY).left(1)).isEqualTo(9);
	}

	@Test
	void knowsAtMostItsCapOfKeys() {
		for (int i = 0; i < KnownStates.MAX_KEYS + 1000; i++) {
			this.states.answered(this.states.sending(List.of(new KeyedPolicy("k" + i, POLICY))), List.of(left(9)), 0);
			assertThat(this.states.size()).isLessThanOrEqualTo(KnownStates.MAX_KEYS);
		}
	}

	/** Redis' reply to an admitted request: so many left, the key full again in a minute. */
	@Test
	void expectsRedisToHoldAStateItSaidHoldsAndRestoresItOncePerLoss() {
		List<KnownStates.Known> sent = this.states.sending(LIMITS);
		assertThat(KnownStates.expected(sent, this.clock.nanoTime())).as("before any reply").isEmpty();
		this.states.answered(sent, List.of(left(6)), 0);
		KnownStates.Known known = this.states.tracked("k", POLICY);
		long before = this.clock.nanoTime();
		assertThat(KnownStates.expected(List.of(known), before)).isEqualTo("1");
		this.clock.advance(Duration.ofMillis(1));
		List<Long> told = new ArrayList<>();
		CompletableFuture<Void> restoring = new CompletableFuture<>();
		CompletableFuture<?> first = known.lost(before, this.clock.nanoTime(), (left) -> {
			told.add(left);
			return restoring;
		});
		// a second call sent before the loss was found joins the restoration under way
		assertThat(known.lost(before, this.clock.nanoTime(), (left) -> {
			throw new AssertionError("restored twice");
		})).isSameAs(first);
		assertThat(known.restoring()).isSameAs(first);
		assertThat(told).containsExactly(6L);
		restoring.complete(null);
		assertThat(known.restoring()).isNull();
		// nothing is expected until Redis answers again, then only that the state exists, for a while
		assertThat(KnownStates.expected(List.of(known), this.clock.nanoTime())).isEmpty();
		this.states.answered(this.states.sending(LIMITS), List.of(left(5)), this.clock.nanoTime());
		assertThat(KnownStates.expected(List.of(known), this.clock.nanoTime())).isEqualTo("2");
		this.clock.advance(Duration.ofNanos(2 * KnownStates.RESTORED_NANOS));
		assertThat(KnownStates.expected(List.of(known), this.clock.nanoTime())).isEqualTo("1");
	}

	@Test
	void expectsNothingOfAStateRedisSaidIsFullAlmostNow() {
		this.states.answered(this.states.sending(LIMITS), List.of(left(6)), 0);
		this.clock.advance(Duration.ofMinutes(1).minusNanos(KnownStates.EXPECT_MARGIN_NANOS));
		assertThat(KnownStates.expected(List.of(this.states.tracked("k", POLICY)), this.clock.nanoTime())).isEmpty();
	}

	@Test
	void keepsWhatItLastHeardWhenRedisCouldNotBeToldOfALoss() {
		this.states.answered(this.states.sending(LIMITS), List.of(left(6)), 0);
		KnownStates.Known known = this.states.tracked("k", POLICY);
		CompletableFuture<?> failed = known.lost(0, this.clock.nanoTime(),
				(left) -> CompletableFuture.failedFuture(new TimeoutException()));
		assertThat(failed).isCompletedExceptionally();
		// the failure policy goes on from the known state, and a later call restores it
		assertThat(known.left(1)).isEqualTo(6);
		assertThat(KnownStates.expected(List.of(known), this.clock.nanoTime())).isEqualTo("2");
	}

	private static Decision left(long remaining) {
		return new Decision(true, 10, remaining, 0, Duration.ofMinutes(1).toNanos(), 0, 0);
	}

}
