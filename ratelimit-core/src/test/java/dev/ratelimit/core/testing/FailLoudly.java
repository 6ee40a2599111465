package dev.ratelimit.core.testing;

import dev.ratelimit.core.RateLimitStore;

/**
 * A failure listener for tests whose Redis must answer every call: a decision Redis did not make fails the test
 * with Redis' own failure, instead of passing or failing later on a decision the failure policy made.
 */
public final class FailLoudly {

	/** Throws an {@link AssertionError}, which the store lets through to the deciding test. */
	public static final RateLimitStore.FailureListener ON_REDIS_FAILURE = (policies, cause) -> {
		throw new AssertionError("Redis did not decide " + policies + ": " + cause, cause);
	};

	private FailLoudly() {
	}

}
