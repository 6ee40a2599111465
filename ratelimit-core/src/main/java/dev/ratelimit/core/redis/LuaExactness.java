package dev.ratelimit.core.redis;

import java.math.BigInteger;

import dev.ratelimit.core.RateLimitPolicy;

/**
 * The arithmetic limits of the scripts: Lua numbers are doubles, exact up to 2^53, and every value a script
 * computes for a policy must stay below it.
 */
final class LuaExactness {

	/** The largest number a Lua number (a double) holds exactly. */
	private static final long MAX_EXACT = 1L << 53;

	/**
	 * How far into the future an instant in a key may lie, in microseconds: {@code TIME} (about 2^50.7 in 2026)
	 * plus this stays below 2^53 until the year 2255.
	 */
	private static final long MAX_HORIZON_MICROS = 1L << 52;

	private LuaExactness() {
	}

	/**
	 * Rejects the few policies whose figures a Lua number could not hold exactly, naming what is too large.
	 */
	static void check(RateLimitPolicy policy) {
		boolean bucket = switch (policy.algorithm()) {
			case TOKEN_BUCKET, LEAKY_BUCKET, GCRA -> true;
			case FIXED_WINDOW, SLIDING_LOG, SLIDING_WINDOW_COUNTER -> false;
		};
		BigInteger limit = BigInteger.valueOf(policy.limit());
		BigInteger window = BigInteger.valueOf(policy.windowMicros());
		String problem = null;
		if (policy.windowMicros() > MAX_HORIZON_MICROS) {
			problem = "its window is longer than 2^52 microseconds (142 years)";
		}
		else if (policy.limit() > MAX_EXACT) {
			problem = "its limit is above 2^53";
		}
		else if (bucket && policy.limit() / limit.gcd(window).longValue() > MAX_EXACT / 1000) {
			// the ticks per microsecond, times 1000 when they are turned into nanoseconds
			problem = "window / limit needs more than 2^53 / 1000 ticks per microsecond";
		}
		else if (bucket && BigInteger.valueOf(policy.burst() + policy.cost())
			.multiply(window)
			.divide(limit)
			.add(BigInteger.valueOf(policy.maxWaitMicros()))
			.compareTo(BigInteger.valueOf(MAX_HORIZON_MICROS)) > 0) {
			problem = "(burst + cost) x window / limit + maxWait is longer than 2^52 microseconds (142 years)";
		}
		if (problem != null) {
			throw new IllegalArgumentException("policy '" + policy.name() + "' (" + policy.limit() + " per "
					+ policy.window() + ", " + policy.algorithm() + ") cannot be computed exactly in Redis: "
					+ problem);
		}
	}

}
