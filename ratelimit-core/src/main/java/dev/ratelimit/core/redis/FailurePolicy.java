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
	 * Decide with a local store, by default an in-memory one, until Redis answers again. Limits hold per
	 * instance instead of per fleet: a fleet of {@code n} instances lets up to {@code n} times the limit
	 * through while Redis is away.
	 */
	LOCAL

}
