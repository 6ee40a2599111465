package dev.ratelimit.core;

/**
 * The six rate limiting algorithms. All of them answer "may this request pass now?"; they differ in how they
 * remember the past and therefore in how they treat bursts.
 */
public enum Algorithm {

	/** Counts requests per fixed, aligned window; up to twice the limit can pass across a window boundary. */
	FIXED_WINDOW,

	/** Remembers the time of every allowed request within the window; exact, memory grows with the limit. */
	SLIDING_LOG,

	/** Weighs the previous window's count by how much of it still overlaps; two counters, close to the log. */
	SLIDING_WINDOW_COUNTER,

	/** A bucket of {@code burst} tokens refilled at {@code limit / window}; average rate plus bursts. */
	TOKEN_BUCKET,

	/**
	 * A queue of {@code burst} places drained one request per {@code window / limit}; admitted requests wait for
	 * their slot, so the output is perfectly smooth.
	 */
	LEAKY_BUCKET,

	/**
	 * The generic cell rate algorithm: one theoretical arrival time per key, the same decisions as the token
	 * bucket.
	 */
	GCRA

}
