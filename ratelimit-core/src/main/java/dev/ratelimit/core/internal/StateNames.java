package dev.ratelimit.core.internal;

import dev.ratelimit.core.RateLimitPolicy;

/**
 * The names under which the shared stores keep a policy's states, so that a runtime change's states never mix
 * with those of the values it changed from.
 */
public final class StateNames {

	private StateNames() {
	}

	/**
	 * The name of a policy's state: its name, or for a policy that a runtime change made of the policy
	 * {@code original}, its name with its values, which no policy name holds since none has {@code @}.
	 * @param policy the policy now
	 * @param original the policy as declared, before its first change
	 * @return the name of the policy's states
	 */
	public static String of(RateLimitPolicy policy, RateLimitPolicy original) {
		if (policy.limit() == original.limit() && policy.window().equals(original.window())
				&& policy.burst() == original.burst() && policy.delayAfter() == original.delayAfter()) {
			return policy.name();
		}
		return policy.name() + '@' + policy.limit() + '/' + policy.windowMicros() + '/' + policy.burst()
				+ ((policy.delayAfter() != 0) ? "/" + policy.delayAfter() : "");
	}

}
