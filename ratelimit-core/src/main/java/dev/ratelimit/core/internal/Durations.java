package dev.ratelimit.core.internal;

import java.time.Duration;
import java.util.Objects;

/**
 * The checks of the durations that the stores' builders take.
 */
public final class Durations {

	private Durations() {
	}

	/**
	 * Checks that {@code duration} is positive, as a timeout or a wait must be.
	 * @param duration the duration
	 * @param name what the builder calls it, for the message
	 * @return the duration
	 * @throws IllegalArgumentException if it is zero or negative
	 */
	public static Duration positive(Duration duration, String name) {
		Objects.requireNonNull(duration, name + " must not be null");
		if (duration.isNegative() || duration.isZero()) {
			throw new IllegalArgumentException(name + " must be positive, was " + duration);
		}
		return duration;
	}

	/**
	 * Checks that {@code duration} is at least a millisecond, as the life of a lease must be.
	 * @param duration the duration
	 * @param name what the builder calls it, for the message
	 * @return the duration
	 * @throws IllegalArgumentException if it is shorter
	 */
	public static Duration atLeastAMillisecond(Duration duration, String name) {
		Objects.requireNonNull(duration, name + " must not be null");
		if (duration.compareTo(Duration.ofMillis(1)) < 0) {
			throw new IllegalArgumentException(name + " must be at least 1 ms, was " + duration);
		}
		return duration;
	}

}
