package dev.ratelimit.core;

import java.time.DateTimeException;
import java.time.DayOfWeek;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.ZoneId;
import java.time.format.DateTimeParseException;
import java.time.temporal.ChronoUnit;
import java.util.Locale;
import java.util.Objects;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A window of a calendar day, week or month in a time zone, for a quota that resets when the calendar says so
 * rather than after a fixed length: {@code calendar day in Europe/Berlin} resets at every midnight in Berlin,
 * 23, 24 or 25 hours apart, and {@code calendar month} on the 1st of each month, 28 to 31 days apart.
 * <p>
 * Periods are numbered: day {@code n} is the {@code n}-th day since 1970-01-01 in the zone, week {@code n}
 * starts on the Monday of that day's ISO week, month {@code n} is the {@code n}-th month since January 1970. A
 * period starts at {@code resetAt} local time on its first day; a local time that a daylight-saving gap skips
 * starts it at the end of the gap.
 *
 * @param unit the length of a period
 * @param zone the time zone of the calendar
 * @param resetAt the local time at which a period starts on its first day
 */
public record CalendarWindow(Unit unit, ZoneId zone, LocalTime resetAt) {

	private static final Pattern TEXT = Pattern.compile(
			"calendar\\s+(day|week|month)(?:\\s+in\\s+(\\S+))?(?:\\s+at\\s+(\\d{2}:\\d{2}))?",
			Pattern.CASE_INSENSITIVE);

	private static final LocalDate EPOCH = LocalDate.EPOCH;

	/**
	 * Validates every component.
	 */
	public CalendarWindow {
		Objects.requireNonNull(unit, "unit must not be null");
		Objects.requireNonNull(zone, "zone must not be null");
		Objects.requireNonNull(resetAt, "resetAt must not be null");
		if (resetAt.getSecond() != 0 || resetAt.getNano() != 0) {
			throw new IllegalArgumentException("resetAt must be a whole minute, was " + resetAt);
		}
	}

	/**
	 * Returns whether {@code text} is meant as a calendar window, that is it starts with {@code calendar}.
	 * @param text a window as written
	 * @return whether to parse it with {@link #parse}
	 */
	public static boolean isCalendar(String text) {
		return text.trim().regionMatches(true, 0, "calendar", 0, 8);
	}

	/**
	 * Parses a calendar window as written in annotations and properties: {@code calendar day}, {@code calendar
	 * week} or {@code calendar month}, then optionally {@code in} a time zone ({@code UTC} unless given), then
	 * optionally {@code at} the local time of the reset ({@code 00:00} unless given), such as {@code calendar
	 * month in Europe/Berlin at 06:00}.
	 * @param text the text to parse
	 * @return the window
	 * @throws IllegalArgumentException naming the text if it is not a calendar window
	 */
	public static CalendarWindow parse(String text) {
		Matcher matcher = TEXT.matcher(text.trim());
		if (!matcher.matches()) {
			throw new IllegalArgumentException("'" + text + "' is not a calendar window: use calendar day, calendar "
					+ "week or calendar month, then optionally in <time zone> and at <HH:mm>, such as "
					+ "'calendar day in Europe/Berlin'");
		}
		Unit unit = Unit.valueOf(matcher.group(1).toUpperCase(Locale.ROOT));
		ZoneId zone;
		try {
			zone = (matcher.group(2) != null) ? ZoneId.of(matcher.group(2)) : ZoneId.of("UTC");
		}
		catch (DateTimeException ex) {
			throw new IllegalArgumentException(
					"'" + text + "' names no time zone that Java knows: " + matcher.group(2) + " (" + ex.getMessage()
							+ "); use a region such as Europe/Berlin or an offset such as UTC+01:00");
		}
		LocalTime resetAt;
		try {
			resetAt = (matcher.group(3) != null) ? LocalTime.parse(matcher.group(3)) : LocalTime.MIDNIGHT;
		}
		catch (DateTimeParseException ex) {
			throw new IllegalArgumentException("'" + text + "' gives no time of day at " + matcher.group(3)
					+ ": use HH:mm from 00:00 to 23:59");
		}
		return new CalendarWindow(unit, zone, resetAt);
	}

	/**
	 * Returns the number of the period that {@code instant} falls in.
	 * @param instant the instant
	 * @return the number of its period
	 */
	public long periodOf(Instant instant) {
		LocalDateTime local = LocalDateTime.ofInstant(instant, this.zone).minusHours(this.resetAt.getHour())
			.minusMinutes(this.resetAt.getMinute());
		long period = number(local.toLocalDate());
		// near a daylight-saving change the local time can misplace the instant by a period at most
		if (instant.isBefore(start(period))) {
			return period - 1;
		}
		if (!instant.isBefore(start(period + 1))) {
			return period + 1;
		}
		return period;
	}

	/**
	 * Returns the instant at which period {@code period} starts, which is where the one before it ends.
	 * @param period the number of a period
	 * @return its start
	 */
	public Instant start(long period) {
		LocalDate first = switch (this.unit) {
			case DAY -> EPOCH.plusDays(period);
			// 1970-01-01 was a Thursday: week 0 starts on the Monday before it
			case WEEK -> EPOCH.with(DayOfWeek.MONDAY).plusWeeks(period);
			case MONTH -> EPOCH.plusMonths(period);
		};
		return first.atTime(this.resetAt).atZone(this.zone).toInstant();
	}

	/**
	 * Returns the nominal length of a period: a day, a week, or 31 days for a month. A policy of this window
	 * has it as its window, which the {@code RateLimit-Policy} header reports; the real periods are 23 to 25
	 * hours long across daylight-saving changes and 28 to 31 days for months.
	 * @return the nominal length
	 */
	public Duration nominalLength() {
		return switch (this.unit) {
			case DAY -> Duration.ofDays(1);
			case WEEK -> Duration.ofDays(7);
			case MONTH -> Duration.ofDays(31);
		};
	}

	/**
	 * Returns how long a period lasts at most, which no real period exceeds: its nominal length and the three
	 * hours that any time zone has moved its clocks at once at most.
	 * @return the longest period
	 */
	public Duration longestPeriod() {
		return nominalLength().plusHours(3);
	}

	private long number(LocalDate date) {
		return switch (this.unit) {
			case DAY -> date.toEpochDay();
			case WEEK -> Math.floorDiv(date.toEpochDay() + 3, 7);
			case MONTH -> ChronoUnit.MONTHS.between(EPOCH, date.withDayOfMonth(1));
		};
	}

	@Override
	public String toString() {
		return "calendar " + this.unit.name().toLowerCase(Locale.ROOT) + " in " + this.zone
				+ (this.resetAt.equals(LocalTime.MIDNIGHT) ? "" : " at " + this.resetAt);
	}

	/** The length of a calendar period. */
	public enum Unit {

		/** A day, starting at the reset time. */
		DAY,

		/** An ISO week, starting on Monday at the reset time. */
		WEEK,

		/** A month, starting on the 1st at the reset time. */
		MONTH

	}

}
