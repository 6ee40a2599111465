package dev.ratelimit.core;

import java.time.Duration;
import java.time.Instant;
import java.time.LocalTime;
import java.time.ZoneId;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * Tests for {@link CalendarWindow}: how it is written, and the periods that the stores count by.
 */
class CalendarWindowTests {

	@Test
	void parsesTheUnitTheZoneAndTheResetTime() {
		assertThat(CalendarWindow.parse("calendar month"))
			.isEqualTo(new CalendarWindow(CalendarWindow.Unit.MONTH, ZoneId.of("UTC"), LocalTime.MIDNIGHT));
		assertThat(CalendarWindow.parse(" Calendar Day in Europe/Berlin at 06:30 "))
			.isEqualTo(new CalendarWindow(CalendarWindow.Unit.DAY, ZoneId.of("Europe/Berlin"), LocalTime.of(6, 30)));
		assertThat(CalendarWindow.parse("calendar week in UTC+01:00")).hasToString("calendar week in UTC+01:00");
	}

	@ParameterizedTest
	@ValueSource(strings = { "calendar", "calendar year", "calendar day in Mars/Olympus", "calendar day at 25:00",
			"calendar day in" })
	void refusesWhatIsNotACalendarWindowNamingIt(String text) {
		assertThatIllegalArgumentException().isThrownBy(() -> CalendarWindow.parse(text))
			.withMessageContaining("'" + text + "'");
	}

	@Test
	void tellsACalendarWindowFromADuration() {
		assertThat(CalendarWindow.isCalendar("calendar day")).isTrue();
		assertThat(CalendarWindow.isCalendar("1d")).isFalse();
	}

	@Test
	void numbersPeriodsAndStartsThemOnTheCalendar() {
		CalendarWindow daily = CalendarWindow.parse("calendar day in Europe/Berlin");
		long period = daily.periodOf(Instant.parse("2024-03-31T12:00:00Z"));
		assertThat(daily.start(period)).isEqualTo(Instant.parse("2024-03-30T23:00:00Z"));
		assertThat(daily.start(period + 1)).isEqualTo(Instant.parse("2024-03-31T22:00:00Z"));
		assertThat(daily.periodOf(Instant.parse("2024-03-31T21:59:59.999999Z"))).isEqualTo(period);
		assertThat(daily.periodOf(Instant.parse("2024-03-31T22:00:00Z"))).isEqualTo(period + 1);
		CalendarWindow weekly = CalendarWindow.parse("calendar week");
		assertThat(weekly.start(weekly.periodOf(Instant.parse("1970-01-01T00:00:00Z"))))
			.isEqualTo(Instant.parse("1969-12-29T00:00:00Z"));
	}

	@Test
	void startsAPeriodThatADaylightSavingGapSkipsAtTheEndOfTheGap() {
		// clocks in Berlin went from 02:00 to 03:00 on 2024-03-31
		CalendarWindow daily = CalendarWindow.parse("calendar day in Europe/Berlin at 02:30");
		long period = daily.periodOf(Instant.parse("2024-03-31T12:00:00Z"));
		assertThat(daily.start(period)).isEqualTo(Instant.parse("2024-03-31T01:30:00Z"));
		assertThat(daily.periodOf(Instant.parse("2024-03-31T01:29:59Z"))).isEqualTo(period - 1);
	}

	@ParameterizedTest
	@EnumSource(value = Algorithm.class, names = "FIXED_WINDOW", mode = EnumSource.Mode.EXCLUDE)
	void onlyTheFixedWindowCountsPerPeriod(Algorithm algorithm) {
		RateLimitPolicy policy = RateLimitPolicy.of("daily", algorithm, 5, Duration.ofDays(1));
		assertThatIllegalArgumentException()
			.isThrownBy(() -> policy.withCalendar(CalendarWindow.parse("calendar day in Europe/Berlin")))
			.withMessage("window of policy 'daily' is a calendar day in Europe/Berlin, but only FIXED_WINDOW counts "
					+ "per calendar period; " + algorithm
					+ " spreads its quota over a window's length, which calendar periods do not keep");
	}

	@Test
	void aPolicyOfACalendarHasItsNominalLengthAsWindowAndItsLongestPeriodUntilFull() {
		RateLimitPolicy monthly = RateLimitPolicy.of("monthly", Algorithm.FIXED_WINDOW, 10_000, Duration.ofSeconds(1))
			.withCalendar(CalendarWindow.parse("calendar month"));
		assertThat(monthly.window()).isEqualTo(Duration.ofDays(31));
		assertThat(monthly.fullAfter()).isEqualTo(Duration.ofDays(31).plusHours(3));
		assertThat(monthly.withLimit(20_000, Duration.ofDays(31)).calendar()).isEqualTo(monthly.calendar());
		assertThat(monthly.withLimit(20_000, Duration.ofDays(1)).calendar()).isNull();
		assertThatIllegalArgumentException()
			.isThrownBy(() -> new RateLimitPolicy("monthly", Algorithm.FIXED_WINDOW, 5, Duration.ofDays(30), 5, 1, 0,
					Duration.ZERO, Duration.ZERO, CalendarWindow.parse("calendar month")))
			.withMessageContaining("is PT720H, but its calendar month in UTC is PT744H long");
	}

}
