package dev.ratelimit.spring.web.internal;

import java.time.Duration;
import java.util.function.Supplier;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.CalendarWindow;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.spring.RateLimitConfigurationException;
import org.jspecify.annotations.Nullable;

import org.springframework.expression.Expression;
import org.springframework.expression.ParseException;
import org.springframework.expression.spel.standard.SpelExpressionParser;

/**
 * The checks that every kind of declaration shares: a value that the core refuses, a window, a leaky bucket's
 * undelayed requests and a SpEL expression each fail the start with a message that names where the value was
 * written and the action that fixes it.
 */
final class DeclaredValues {

	private static final SpelExpressionParser PARSER = new SpelExpressionParser();

	private DeclaredValues() {
	}

	/**
	 * Returns what {@code parse} makes, or fails the start with {@code description} and the message of the
	 * {@link IllegalArgumentException} it threw.
	 */
	static <T> T parse(String description, String action, Supplier<T> parse) {
		try {
			return parse.get();
		}
		catch (IllegalArgumentException ex) {
			throw new RateLimitConfigurationException(description + ex.getMessage(), action);
		}
	}

	/**
	 * Parses a window of the annotation or of the configuration, both in one syntax: a duration, or a calendar
	 * window such as {@code calendar day in Europe/Berlin}.
	 */
	static Window window(String where, String action, String window) {
		return parse("Invalid " + where + ": window ", action, () -> {
			if (CalendarWindow.isCalendar(window)) {
				CalendarWindow calendar = CalendarWindow.parse(window);
				return new Window(calendar.nominalLength(), calendar);
			}
			return new Window(RateLimitPolicy.parseWindow(window), null);
		});
	}

	/** Returns how long a refused client stays refused, {@link Duration#ZERO} where none is written. */
	static Duration penalty(String where, String action, @Nullable String penalty) {
		if (penalty == null || penalty.isBlank()) {
			return Duration.ZERO;
		}
		return parse("Invalid " + where + ": penalty ", action, () -> RateLimitPolicy.parseWindow(penalty));
	}

	/** Returns how many of a client's requests a limit lets be in flight at once, 0 for no such limit. */
	static long concurrency(String where, String action, @Nullable Long concurrency) {
		if (concurrency == null) {
			return 0;
		}
		if (concurrency < 0) {
			throw new RateLimitConfigurationException(
					"Invalid " + where + ": concurrency must be 0, for none, or at least 1, was " + concurrency + ".",
					action);
		}
		return concurrency;
	}

	/**
	 * A window as written: its length, and its calendar for a calendar window.
	 *
	 * @param length the window's length, the nominal length of a calendar window's periods
	 * @param calendar the calendar, or null for a window of a fixed length
	 */
	record Window(Duration length, @Nullable CalendarWindow calendar) {
	}

	/**
	 * Returns how many queued requests pass without waiting, checking the two ways to say it with the names
	 * the user wrote them under.
	 */
	static long delayAfter(String where, String action, Algorithm algorithm, long burst, @Nullable Long delayAfter,
			String delayAfterName, boolean noDelay, String noDelayName) {
		if (delayAfter == null && !noDelay) {
			return 0;
		}
		if (delayAfter != null && noDelay) {
			throw new RateLimitConfigurationException("Invalid " + where + ": " + delayAfterName + " (" + delayAfter
					+ ") and " + noDelayName + " are both set: " + noDelayName + " passes the whole burst at once, "
					+ delayAfterName + " only its first requests.", action + " Keep one of them.");
		}
		String mode = noDelay ? noDelayName : delayAfterName + " (" + delayAfter + ")";
		if (algorithm != Algorithm.LEAKY_BUCKET) {
			throw new RateLimitConfigurationException("Invalid " + where + ": " + mode
					+ " applies only to LEAKY_BUCKET, the algorithm that queues requests; " + algorithm
					+ " rejects them instead.", action);
		}
		if (noDelay) {
			return burst;
		}
		// a burst below 1 is reported by the policy itself
		if (delayAfter < 0 || (burst >= 1 && delayAfter > burst)) {
			throw new RateLimitConfigurationException("Invalid " + where + ": " + delayAfterName
					+ " must be between 0 and the burst (" + burst + "), was " + delayAfter + ".", action);
		}
		return delayAfter;
	}

	/** Parses {@code text}, or fails the start with {@code invalid} and the parser's message. */
	static Expression spel(String invalid, String text, String action) {
		try {
			return PARSER.parseExpression(text);
		}
		catch (ParseException ex) {
			throw new RateLimitConfigurationException(
					invalid + "'" + text + "' is not a SpEL expression: " + ex.getMessage(), action);
		}
	}

	static @Nullable String blankToNull(@Nullable String text) {
		return (text == null || text.isBlank()) ? null : text.trim();
	}

}
