package dev.ratelimit.core.internal;

import java.time.Instant;
import java.time.temporal.ChronoUnit;

import dev.ratelimit.core.CalendarWindow;

/**
 * The periods of a calendar window around an instant, which a shared store's server reads since it knows
 * nothing of the policy's time zone: the number of the period before the one of the instant, then the
 * boundaries of that period and of the three after it, in Unix epoch microseconds. The server finds its own now
 * among them however its clock and the caller's differ, by up to a period. Computed once per period.
 */
public final class CalendarBounds {

	/** How many values the bounds hold. */
	public static final int SIZE = 5;

	private final CalendarWindow calendar;

	private volatile Written written = new Written(0, 0, new long[SIZE]);

	/**
	 * Creates the bounds of a calendar window.
	 * @param calendar the window
	 */
	public CalendarBounds(CalendarWindow calendar) {
		this.calendar = calendar;
	}

	/**
	 * Returns the bounds around {@code wallMicros}: the same array for every caller of one period, which no caller
	 * may change.
	 * @param wallMicros the caller's now, in Unix epoch microseconds
	 * @return the period before the one of {@code wallMicros}, then four boundaries
	 */
	public long[] at(long wallMicros) {
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
		return current.bounds;
	}

	/** Bounds for callers whose now is in {@code [from, until)}: the period they were written around. */
	private record Written(long from, long until, long[] bounds) {
	}

}
