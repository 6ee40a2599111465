package dev.ratelimit.core.redis;

import dev.ratelimit.core.CalendarWindow;
import dev.ratelimit.core.internal.CalendarBounds;

/**
 * The window argument of a calendar window's scripts, which Lua cannot compute for want of time zones: the
 * {@link CalendarBounds bounds} around the caller's now, {@code "<period>:<start>:<end>:<end>:<end>"}. Written once
 * per period.
 */
final class CalendarArgument {

	private final CalendarBounds bounds;

	private volatile Written written = new Written(new long[0], "");

	CalendarArgument(CalendarWindow calendar) {
		this.bounds = new CalendarBounds(calendar);
	}

	/** The argument around {@code wallMicros}, the caller's now in Unix epoch microseconds. */
	String at(long wallMicros) {
		long[] bounds = this.bounds.at(wallMicros);
		Written current = this.written;
		if (current.bounds != bounds) {
			StringBuilder argument = new StringBuilder().append(bounds[0]);
			for (int i = 1; i < bounds.length; i++) {
				argument.append(':').append(bounds[i]);
			}
			current = new Written(bounds, argument.toString());
			this.written = current;
		}
		return current.argument;
	}

	/** The argument written of one period's bounds. */
	private record Written(long[] bounds, String argument) {
	}

}
