package dev.ratelimit.core;

/**
 * What a store that keeps its state in a server shared by a fleet, such as Redis, decides when the server does
 * not answer within the store's timeout, fails, or is known to be failing; the store's
 * {@link RateLimitStore#failures() failures} tell which policy it follows and how often it decided.
 */
public enum FailurePolicy {

	/**
	 * Fail open: allow every request. The service stays available and unprotected while the server is away.
	 */
	ALLOW,

	/**
	 * Fail closed: deny every request. Nothing passes unchecked, and nothing passes at all while the server
	 * is away.
	 */
	DENY,

	/**
	 * Decide with a local store, by default an in-memory one, until the server answers again. Each instance
	 * enforces its share of every limit, {@code ceil(limit / n)} for the {@code n} instances of its
	 * {@link RateLimitStore#fleet() fleet}, so that the fleet admits at most {@code limit + n - 1} per window
	 * while the server is away.
	 */
	LOCAL

}
