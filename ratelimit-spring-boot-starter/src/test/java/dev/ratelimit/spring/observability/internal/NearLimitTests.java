package dev.ratelimit.spring.observability.internal;

import dev.ratelimit.core.Decision;
import dev.ratelimit.spring.RateLimitConfigurationException;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Tests of what counts as near the limit.
 */
class NearLimitTests {

	@Test
	void countsFewerPermitsLeftThanTheShareOfTheLimit() {
		NearLimit near = NearLimit.of(0.2);
		assertThat(near.isNear(allowed(10, 2))).isFalse();
		assertThat(near.isNear(allowed(10, 1))).isTrue();
		assertThat(near.isNear(allowed(10, 0))).isTrue();
		assertThat(near.isNear(allowed(3, 1))).as("below 0.6").isFalse();
		assertThat(near.isNear(allowed(3, 0))).isTrue();
	}

	@Test
	void takesTheShareAsTheDecimalItIsWrittenAs() {
		// 0.07 * 100 is 7.000000000000001 in doubles, which would count 7 left as near
		NearLimit near = NearLimit.of(0.07);
		assertThat(near.isNear(allowed(100, 7))).isFalse();
		assertThat(near.isNear(allowed(100, 6))).isTrue();
	}

	@Test
	void neverCountsADeniedRequest() {
		assertThat(NearLimit.of(0.5).isNear(new Decision(false, 10, 0, 1, 1, 0))).isFalse();
	}

	@Test
	void rejectsNotANumber() {
		assertThatExceptionOfType(RateLimitConfigurationException.class).isThrownBy(() -> NearLimit.of(Double.NaN))
			.withMessageStartingWith("Invalid ratelimit.near-limit-share: NaN");
	}

	private static Decision allowed(long limit, long remaining) {
		return new Decision(true, limit, remaining, 0, 1, 0);
	}

}
