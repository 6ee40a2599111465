package dev.ratelimit.core.memory;

import dev.ratelimit.core.Decision;

/**
 * The state of one key under one policy. Every method runs while holding the state's monitor; a retired state
 * has been forgotten by its table and must not be used again.
 */
abstract class KeyState {

	boolean retired;

	/**
	 * Whether a request at {@code now} (microseconds) is allowed; takes its cost when {@code commit} is set and
	 * it is. Work that does not change any future decision, such as dropping expired entries, may happen
	 * either way.
	 */
	abstract boolean acquire(Rules rules, long now, boolean commit);

	/** Describes the state at {@code now}, right after a request was allowed and taken, or denied. */
	abstract Decision describe(Rules rules, long now, boolean allowed);

	/** Whether this state decides every future request as a new, empty state would, so it can be forgotten. */
	abstract boolean isIdle(Rules rules, long now);

}
