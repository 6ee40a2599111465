package dev.ratelimit.core;

import java.time.Duration;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class RateLimitPolicyTests {

	private static final Duration TEN_SECONDS = Duration.ofSeconds(10);

	@Test
	void takesAnotherLimitWithTheBurstAndTheQueueFollowing() {
		RateLimitPolicy noDelay = RateLimitPolicy.of("queue", Algorithm.LEAKY_BUCKET, 10, Duration.ofSeconds(10))
			.withDelayAfter(10);
		RateLimitPolicy smaller = noDelay.withLimit(5, Duration.ofSeconds(10));
		assertThat(smaller.burst()).as("a burst that was the limit follows it").isEqualTo(5);
		assertThat(smaller.delayAfter()).as("a queue that passed at once still does").isEqualTo(5);
		RateLimitPolicy delayed = noDelay.withBurst(20).withDelayAfter(8);
		assertThat(delayed.withLimit(5, Duration.ofSeconds(10), 4).delayAfter()).as("at most the new burst")
			.isEqualTo(4);
		assertThat(delayed.withLimit(5, Duration.ofSeconds(10)).burst()).as("a burst of its own stays").isEqualTo(20);
	}

	@Test
	void defaultsTheBurstToTheLimitAndTheCostToOne() {
		RateLimitPolicy policy = RateLimitPolicy.of("api", Algorithm.GCRA, 10, TEN_SECONDS);
		assertThat(policy.burst()).isEqualTo(10);
		assertThat(policy.cost()).isEqualTo(1);
		assertThat(policy.delayAfter()).isZero();
		assertThat(policy.windowMicros()).isEqualTo(10_000_000);
	}

	@ParameterizedTest
	@CsvSource({ "500ms, PT0.5S", "10s, PT10S", "1m, PT1M", "1h, PT1H", "1d, PT24H", "PT10S, PT10S",
			"' 30 s ', PT30S", "P1D, PT24H", "pt2m, PT2M" })
	void parsesWindows(String text, Duration expected) {
		assertThat(RateLimitPolicy.parseWindow(text)).isEqualTo(expected);
	}

	@ParameterizedTest
	@ValueSource(strings = { "", "10", "ten seconds", "1.5s", "-1s", "PT", "10 parsecs", "1w" })
	void rejectsWhatIsNotAWindowNamingIt(String text) {
		assertThatIllegalArgumentException().isThrownBy(() -> RateLimitPolicy.parseWindow(text))
			.withMessageContaining("'" + text + "'")
			.withMessageContaining("500ms");
	}

	@Test
	void rejectsAZeroLimit() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> RateLimitPolicy.of("api", Algorithm.GCRA, 0, TEN_SECONDS))
			.withMessage("limit of policy 'api' must be at least 1, was 0");
	}

	@Test
	void rejectsAnEmptyOrNegativeWindow() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> RateLimitPolicy.of("api", Algorithm.GCRA, 1, Duration.ZERO))
			.withMessageContaining("window of policy 'api' must be positive");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> RateLimitPolicy.of("api", Algorithm.GCRA, 1, Duration.ofSeconds(-1)))
			.withMessageContaining("must be positive");
	}

	@Test
	void rejectsAWindowFinerThanAMicrosecond() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> RateLimitPolicy.of("api", Algorithm.GCRA, 1, Duration.ofNanos(1500)))
			.withMessageContaining("whole number of microseconds");
	}

	@Test
	void acceptsAWindowOfAThousandYearsAndNoLonger() {
		Duration thousandYears = Duration.ofDays(365_000);
		assertThat(RateLimitPolicy.of("api", Algorithm.FIXED_WINDOW, 1, thousandYears).window())
			.isEqualTo(thousandYears);
		assertThatIllegalArgumentException()
			.isThrownBy(() -> RateLimitPolicy.of("api", Algorithm.FIXED_WINDOW, 1, thousandYears.plusNanos(1000)))
			.withMessageContaining("at most 1000 years");
	}

	@Test
	void rejectsABadBurstCostAndDelayAfter() {
		RateLimitPolicy gcra = RateLimitPolicy.of("api", Algorithm.GCRA, 10, TEN_SECONDS);
		assertThatIllegalArgumentException().isThrownBy(() -> gcra.withBurst(0))
			.withMessage("burst of policy 'api' must be at least 1, was 0");
		assertThatIllegalArgumentException().isThrownBy(() -> gcra.withCost(0))
			.withMessage("cost of policy 'api' must be at least 1, was 0");
		assertThatIllegalArgumentException().isThrownBy(() -> gcra.withCost(11))
			.withMessageContaining("cost of policy 'api' is 11, more than its capacity of 10");
		assertThatIllegalArgumentException().isThrownBy(() -> gcra.withDelayAfter(1))
			.withMessageContaining("only LEAKY_BUCKET delays requests");
		RateLimitPolicy leaky = RateLimitPolicy.of("q", Algorithm.LEAKY_BUCKET, 2, Duration.ofSeconds(1)).withBurst(5);
		assertThat(leaky.withDelayAfter(5).delayAfter()).isEqualTo(5);
		assertThatIllegalArgumentException().isThrownBy(() -> leaky.withDelayAfter(6))
			.withMessageContaining("delayAfter of policy 'q' must be between 0 and burst (5), was 6");
	}

	@Test
	void waitsForPermitsOnlyWhereTheAlgorithmReservesThem() {
		RateLimitPolicy gcra = RateLimitPolicy.of("api", Algorithm.GCRA, 10, TEN_SECONDS);
		RateLimitPolicy waiting = gcra.withCost(2).withMaxWait(Duration.ofSeconds(3));
		assertThat(waiting.maxWait()).isEqualTo(Duration.ofSeconds(3));
		assertThat(waiting.maxWaitMicros()).isEqualTo(3_000_000);
		assertThat(waiting.withBurst(20).maxWait()).as("kept by every copy").isEqualTo(Duration.ofSeconds(3));
		assertThat(waiting.shared()).isEqualTo(gcra);
		assertThat(gcra.shared()).isSameAs(gcra);
		assertThat(gcra.withMaxWait(TEN_SECONDS).maxWait()).isEqualTo(TEN_SECONDS);
		assertThatIllegalArgumentException().isThrownBy(() -> gcra.withMaxWait(TEN_SECONDS.plusNanos(1000)))
			.withMessageContaining("maxWait of policy 'api' is PT10.000001S, but it must be a whole number of "
					+ "microseconds between zero and the window (PT10S)");
		assertThatIllegalArgumentException().isThrownBy(() -> gcra.withMaxWait(Duration.ofNanos(1)))
			.withMessageContaining("whole number of microseconds");
		assertThatIllegalArgumentException().isThrownBy(() -> gcra.withMaxWait(Duration.ofSeconds(-1)))
			.withMessageContaining("between zero and the window");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> RateLimitPolicy.of("q", Algorithm.LEAKY_BUCKET, 2, TEN_SECONDS)
				.withMaxWait(Duration.ofSeconds(1)))
			.withMessageContaining("only GCRA and TOKEN_BUCKET reserve permits for a request that waits; "
					+ "LEAKY_BUCKET queues requests through delayAfter");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> RateLimitPolicy.of("w", Algorithm.SLIDING_LOG, 2, TEN_SECONDS)
				.withMaxWait(Duration.ofSeconds(1)))
			.withMessageContaining("SLIDING_LOG counts a window and cannot take a permit of a window to come");
	}

	@Test
	void rejectsABurstOnTheWindowAlgorithms() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> RateLimitPolicy.of("api", Algorithm.SLIDING_LOG, 10, TEN_SECONDS).withBurst(20))
			.withMessageContaining("SLIDING_LOG has no burst");
	}

	@ParameterizedTest
	@ValueSource(strings = { "", "with space", "brace{", "quote\"", "a/b" })
	void rejectsNamesThatCannotAppearInHeadersAndKeys(String name) {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> RateLimitPolicy.of(name, Algorithm.GCRA, 10, TEN_SECONDS))
			.withMessageContaining("name '" + name + "' is invalid");
	}

	@Test
	void acceptsLargeButExactPolicies() {
		assertThat(RateLimitPolicy.of("daily", Algorithm.GCRA, 1_000_000, Duration.ofDays(1)).capacity())
			.isEqualTo(1_000_000);
		assertThat(RateLimitPolicy.of("daily", Algorithm.FIXED_WINDOW, 1_000_000_000, Duration.ofDays(1)).limit())
			.isEqualTo(1_000_000_000);
		assertThatIllegalArgumentException()
			.isThrownBy(() -> RateLimitPolicy.of("log", Algorithm.SLIDING_LOG, 1_000_000, Duration.ofDays(1)))
			.withMessageContaining("one timestamp per permit");
	}

	@Test
	void acceptsAPolicyWhoseStateReachesExactly2To53AndNoFurther() {
		// the sliding window counter weighs limit x window in microseconds: 2^19 x 2^34 is 2^53
		Duration window = Duration.ofNanos((1L << 34) * 1000);
		assertThat(RateLimitPolicy.of("a", Algorithm.SLIDING_WINDOW_COUNTER, 1L << 19, window).limit())
			.isEqualTo(1L << 19);
		// 2^54 fits a long, but not a Lua number
		assertThatIllegalArgumentException()
			.isThrownBy(() -> RateLimitPolicy.of("a", Algorithm.SLIDING_WINDOW_COUNTER, 1L << 20, window))
			.withMessageContaining("below 2^53");
	}

	@Test
	void tellsHowLongAnyKeyTakesToBeFullAgain() {
		Duration window = Duration.ofSeconds(10);
		assertThat(RateLimitPolicy.of("a", Algorithm.FIXED_WINDOW, 3, window).fullAfter()).isEqualTo(window);
		assertThat(RateLimitPolicy.of("a", Algorithm.SLIDING_LOG, 3, window).fullAfter()).isEqualTo(window);
		assertThat(RateLimitPolicy.of("a", Algorithm.SLIDING_WINDOW_COUNTER, 3, window).fullAfter())
			.isEqualTo(Duration.ofSeconds(20));
		assertThat(RateLimitPolicy.of("a", Algorithm.GCRA, 10, window).withBurst(4).fullAfter())
			.isEqualTo(Duration.ofSeconds(4));
		assertThat(RateLimitPolicy.of("a", Algorithm.TOKEN_BUCKET, 3, window).fullAfter()).isEqualTo(window);
		assertThat(RateLimitPolicy.of("a", Algorithm.LEAKY_BUCKET, 3, window).withBurst(1).fullAfter())
			.as("rounded up to the microsecond").isEqualTo(Duration.ofNanos(3_333_334_000L));
	}

}
