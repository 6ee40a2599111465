package dev.ratelimit.core.memory;

import java.time.Instant;
import java.time.temporal.ChronoUnit;

import dev.ratelimit.core.CalendarWindow;

/**
 * The periods of a calendar window on a store's clock, in microseconds from its creation: the period of the
 * latest instant asked for is kept, so that a decision computes a calendar only when a period ends.
 */
final class CalendarPeriods {

	private final CalendarWindow calendar;

	/** The Unix epoch microsecond at which the store's clock reads 0. */
	private final long wallOrigin;

	private volatile Period latest = new Period(0, 0, 0);

	CalendarPeriods(CalendarWindow calendar, long wallOrigin) {
		this.calendar = calendar;
		this.wallOrigin = wallOrigin;
	}

	/** The period that {@code now} falls in. */
	Period at(long now) {
		Period period = this.latest;
		if (now >= period.start && now < period.end) {
			return period;
		}
		long index = this.calendar.periodOf(Instant.EPOCH.plus(this.wallOrigin + now, ChronoUnit.MICROS));
		period = new Period(index, storeTime(this.calendar.start(index)), storeTime(this.calendar.start(index + 1)));
		this.latest = period;
		return period;
	}

	private long storeTime(Instant instant) {
		return ChronoUnit.MICROS.between(Instant.EPOCH, instant) - this.wallOrigin;
	}

	/** A period: its number, and its start and end on the store's clock. */
	record Period(long index, long start, long end) {
	}

}
