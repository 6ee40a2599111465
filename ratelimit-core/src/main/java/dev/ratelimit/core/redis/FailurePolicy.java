package dev.ratelimit.core.redis;

/**
 * What the {@link RedisRateLimitStore} decides when Redis does not answer within its timeout, fails, or is
 * known to be failing.
 */
public enum FailurePolicy {

	/**
	 * Fail open: allow every request. The service stays available and unprotected while Redis is away.
	 */
	ALLOW,

	/**
	 * Fail closed: deny every request. Nothing passes unchecked, and nothing passes at all while Redis is
	 * away.
	 */
	DENY,

	/**
	 * Decide with a local store, by default an in-memory one, until Redis answers again. Each instance enforces
	 * its share of every limit, {@code ceil(limit / n)} for the {@code n} instances its last heartbeat counted,
	 * so that the fleet admits at most {@code limit + n - 1} per window while Redis is away.
	 */
	LOCAL

}
