package dev.ratelimit.spring.client;

import java.time.Duration;
import java.time.Instant;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;

class RetryAfterTests {

	private static final Instant NOW = Instant.parse("1994-11-06T08:49:30Z");

	@Test
	void readsDeltaSeconds() {
		assertThat(RetryAfter.parse("120", NOW)).isEqualTo(Duration.ofSeconds(120));
		assertThat(RetryAfter.parse("0", NOW)).isEqualTo(Duration.ZERO);
		assertThat(RetryAfter.parse(" 7 ", NOW)).isEqualTo(Duration.ofSeconds(7));
	}

	@Test
	void readsDeltaSecondsTooLargeForALongAsForever() {
		assertThat(RetryAfter.parse("99999999999999999999999", NOW)).isEqualTo(Duration.ofSeconds(Long.MAX_VALUE));
	}

	@Test
	void readsImfFixdateRelativeToNow() {
		assertThat(RetryAfter.parse("Sun, 06 Nov 1994 08:49:37 GMT", NOW)).isEqualTo(Duration.ofSeconds(7));
	}

	@Test
	void readsObsoleteRfc850Date() {
		assertThat(RetryAfter.parse("Sunday, 06-Nov-94 08:49:37 GMT", NOW)).isEqualTo(Duration.ofSeconds(7));
	}

	@Test
	void readsRfc850YearMoreThanFiftyYearsAheadAsThePreviousCentury() {
		Instant now = Instant.parse("2030-01-01T00:00:00Z");
		assertThat(RetryAfter.parse("Thursday, 01-Jan-81 00:00:00 GMT", now)).isEqualTo(Duration.ZERO);
		assertThat(RetryAfter.parse("Monday, 01-Jan-80 00:00:10 GMT", now))
			.isEqualTo(Duration.between(now, Instant.parse("2080-01-01T00:00:10Z")));
	}

	@Test
	void readsObsoleteAsctimeDate() {
		assertThat(RetryAfter.parse("Sun Nov  6 08:49:37 1994", NOW)).isEqualTo(Duration.ofSeconds(7));
		assertThat(RetryAfter.parse("Wed Nov 16 08:49:37 1994", NOW)).isEqualTo(Duration.ofDays(10).plusSeconds(7));
	}

	@Test
	void readsDateInThePastAsNoWait() {
		assertThat(RetryAfter.parse("Sun, 06 Nov 1994 08:49:00 GMT", NOW)).isEqualTo(Duration.ZERO);
	}

	@Test
	void readsAbsentAsNull() {
		assertThat(RetryAfter.parse(null, NOW)).isNull();
	}

	@ParameterizedTest
	@ValueSource(strings = { "", "  ", "-1", "+5", "1.5", "5s", "1e3", "0x10", "soon", "٣",
			"Sun, 06 Nov 1994 08:49:37 PST", "Mon, 06 Nov 1994 08:49:37 GMT", "Sun, 6 Nov 1994 08:49:37 GMT",
			"Tue, 31 Feb 1995 08:49:37 GMT", "sun, 06 nov 1994 08:49:37 GMT", "Sun, 06 Nov 1994 08:49:37",
			"Monday, 06-Nov-94 08:49:37 GMT", "Sunday, 06-Nov-1994 08:49:37 GMT", "Sun Nov 06 08:49:37 1994 GMT",
			"1994-11-06T08:49:37Z" })
	void readsMalformedAsNull(String value) {
		assertThat(RetryAfter.parse(value, NOW)).isNull();
	}

}
