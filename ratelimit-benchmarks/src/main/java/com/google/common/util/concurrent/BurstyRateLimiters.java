package com.google.common.util.concurrent;

/**
 * Guava's public factory fixes a limiter's burst at one second of permits. The benchmarks need the same burst
 * as every other limiter, which Guava's own {@code SmoothBursty} supports but does not expose; this class sits
 * in Guava's package only to reach that constructor.
 */
public final class BurstyRateLimiters {

	private BurstyRateLimiters() {
	}

	/**
	 * Creates a limiter of {@code permitsPerSecond} holding at most {@code burst} permits, full from the start
	 * like a token bucket that has been idle (Guava's own limiters start empty).
	 * @param permitsPerSecond the refill rate
	 * @param burst the most permits it stores
	 * @return the limiter
	 */
	public static RateLimiter create(double permitsPerSecond, double burst) {
		SmoothRateLimiter.SmoothBursty limiter = new SmoothRateLimiter.SmoothBursty(
				RateLimiter.SleepingStopwatch.createFromSystemTimer(), burst / permitsPerSecond);
		limiter.setRate(permitsPerSecond);
		// not yet shared with any other thread
		limiter.storedPermits = limiter.maxPermits;
		return limiter;
	}

}
