package dev.ratelimit.core.redis;

import java.time.Instant;
import java.time.temporal.ChronoUnit;

import dev.ratelimit.core.CalendarWindow;

/**
 * The window argument of a calendar window's scripts, which Lua cannot compute for want of time zones: the
 * number of the period before the caller's now, then the boundaries of that period and of the three after it in
 * Unix epoch microseconds, {@code "<period>:<start>:<end>:<end>:<end>"}. Redis finds its own {@code TIME} among
 * them however its clock and the caller's differ, by up to a period. Written once per period.
 */
final class CalendarArgument {

	private final CalendarWindow calendar;

	private volatile Written written = new Written(0, 0, "");

	CalendarArgument(CalendarWindow calendar) {
		this.calendar = calendar;
	}

	/** The argument around {@code wallMicros}, the caller's now in Unix epoch microseconds. */
	String at(long wallMicros) {
		Written current = this.written;
		if (wallMicros >= current.from && wallMicros < current.until) {
			return current.argument;
		}
		long period = this.calendar.periodOf(Instant.EPOCH.plus(wallMicros, ChronoUnit.MICROS));
		StringBuilder argument = new StringBuilder().append(period - 1);
		long[] bounds = new long[4];
		for (int i = 0; i < bounds.length; i++) {
			bounds[i] = ChronoUnit.MICROS.between(Instant.EPOCH, this.calendar.start(period - 1 + i));
			argument.append(':').append(bounds[i]);
		}
		current = new Written(bounds[1], bounds[2], argument.toString());
		this.written = current;
		return current.argument;
	}

	/** An argument, for callers whose now is in {@code [from, until)}: the period it was written around. */
	private record Written(long from, long until, String argument) {
	}

}
