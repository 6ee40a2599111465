package dev.ratelimit.core;

import java.util.Objects;

/**
 * One limit of a stacked decision: a policy enforced on one key. The limits of one request may differ in their
 * keys, as a per-client limit under a ceiling that every client shares does, and one policy may appear on
 * several keys.
 *
 * @param key who is limited, such as a client address, or a key that every client shares
 * @param policy the policy enforced on that key
 */
public record KeyedPolicy(String key, RateLimitPolicy policy) {

	/**
	 * Checks that neither component is null.
	 */
	public KeyedPolicy {
		Objects.requireNonNull(key, "key must not be null");
		Objects.requireNonNull(policy, "policy must not be null");
	}

}
