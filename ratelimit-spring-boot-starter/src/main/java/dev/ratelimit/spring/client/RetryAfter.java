package dev.ratelimit.spring.client;

import java.time.DateTimeException;
import java.time.DayOfWeek;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.format.ResolverStyle;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.jspecify.annotations.Nullable;

/**
 * Reads a {@code Retry-After} field value (RFC 9110, section 10.2.3): either delta-seconds or an HTTP-date, in
 * any of the three date forms a recipient must accept.
 */
final class RetryAfter {

	/** Digits beyond which delta-seconds no longer fit a long: such a value means "practically never". */
	private static final int MAX_DIGITS = 18;

	private static final DateTimeFormatter IMF_FIXDATE = strict("EEE, dd MMM uuuu HH:mm:ss 'GMT'");

	private static final DateTimeFormatter RFC_850_DAY = strict("EEEE");

	private static final DateTimeFormatter RFC_850_REST = strict("dd-MMM-uuuu HH:mm:ss 'GMT'");

	private static final Pattern RFC_850 = Pattern.compile("([A-Za-z]+), (\\d\\d-[A-Za-z]{3}-)(\\d\\d)( .*)");

	private static final DateTimeFormatter ASCTIME = strict("EEE MMM ppd HH:mm:ss uuuu");

	private RetryAfter() {
	}

	/**
	 * Returns how long to wait according to a {@code Retry-After} value.
	 * @param value the field value, or {@code null} when the field is absent
	 * @param now the current time, against which an HTTP-date is measured
	 * @return the wait, zero for a date in the past, or {@code null} when the value is absent or malformed
	 */
	static @Nullable Duration parse(@Nullable String value, Instant now) {
		if (value == null) {
			return null;
		}
		String trimmed = value.strip();
		if (trimmed.isEmpty()) {
			return null;
		}
		if (isDigits(trimmed)) {
			return Duration.ofSeconds((trimmed.length() > MAX_DIGITS) ? Long.MAX_VALUE : Long.parseLong(trimmed));
		}
		Instant date = parseHttpDate(trimmed, now);
		if (date == null) {
			return null;
		}
		return date.isAfter(now) ? Duration.between(now, date) : Duration.ZERO;
	}

	private static boolean isDigits(String value) {
		for (int i = 0; i < value.length(); i++) {
			char c = value.charAt(i);
			if (c < '0' || c > '9') {
				return false;
			}
		}
		return true;
	}

	private static @Nullable Instant parseHttpDate(String value, Instant now) {
		for (DateTimeFormatter format : List.of(IMF_FIXDATE, ASCTIME)) {
			try {
				return LocalDateTime.parse(value, format).toInstant(ZoneOffset.UTC);
			}
			catch (DateTimeException ex) {
				// try the next form
			}
		}
		return parseRfc850(value, now);
	}

	/**
	 * Reads the obsolete RFC 850 form, whose two-digit year is taken in the current century unless that puts
	 * it more than 50 years ahead, in which case it is the century before (RFC 9110, section 5.6.7). The day
	 * of the week is checked once the century is known.
	 */
	private static @Nullable Instant parseRfc850(String value, Instant now) {
		Matcher matcher = RFC_850.matcher(value);
		if (!matcher.matches()) {
			return null;
		}
		int thisYear = LocalDateTime.ofInstant(now, ZoneOffset.UTC).getYear();
		int year = Math.floorDiv(thisYear, 100) * 100 + Integer.parseInt(matcher.group(3));
		if (year > thisYear + 50) {
			year -= 100;
		}
		try {
			DayOfWeek dayOfWeek = DayOfWeek.from(RFC_850_DAY.parse(matcher.group(1)));
			LocalDateTime date = LocalDateTime.parse(matcher.group(2) + year + matcher.group(4), RFC_850_REST);
			return (date.getDayOfWeek() == dayOfWeek) ? date.toInstant(ZoneOffset.UTC) : null;
		}
		catch (DateTimeException ex) {
			return null;
		}
	}

	private static DateTimeFormatter strict(String pattern) {
		return DateTimeFormatter.ofPattern(pattern, Locale.US).withResolverStyle(ResolverStyle.STRICT);
	}

}
