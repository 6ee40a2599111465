package dev.ratelimit.core.jdbc;

import java.time.Instant;
import java.time.temporal.ChronoUnit;

import dev.ratelimit.core.CalendarWindow;

/**
 * The periods of a calendar window around an instant, which the database functions read since they know
 * nothing of the policy's time zone: the number of the period before the one of the instant, then the
 * boundaries of that period and of the three after it, in Unix epoch microseconds. The database finds its own
 * now among them however its clock and the caller's differ, by up to a period.
 */
final class CalendarBounds {

	/** How many values the functions read per limit; a limit without a calendar sends as many zeros. */
	static final int SIZE = 5;

	private final CalendarWindow calendar;

	private volatile Written written = new Written(0, 0, new long[SIZE]);

	CalendarBounds(CalendarWindow calendar) {
		this.calendar = calendar;
	}

	/** Adds the bounds around {@code wallMicros}, the caller's now in Unix epoch microseconds, to {@code values}. */
	void addTo(long[] values, int offset, long wallMicros) {
		Written current = this.written;
		if (wallMicros < current.from || wallMicros >= current.until) {
			long period = this.calendar.periodOf(Instant.EPOCH.plus(wallMicros, ChronoUnit.MICROS));
			long[] bounds = new long[SIZE];
			bounds[0] = period - 1;
			for (int i = 1; i < SIZE; i++) {
				bounds[i] = ChronoUnit.MICROS.between(Instant.EPOCH, this.calendar.start(period - 2 + i));
			}
			current = new Written(bounds[2], bounds[3], bounds);
			this.written = current;
		}
		System.arraycopy(current.bounds, 0, values, offset, SIZE);
	}

	/** Bounds for callers whose now is in {@code [from, until)}: the period they were written around. */
	private record Written(long from, long until, long[] bounds) {
	}

}
