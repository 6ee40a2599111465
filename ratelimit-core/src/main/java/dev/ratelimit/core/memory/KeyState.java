package dev.ratelimit.core.memory;

import dev.ratelimit.core.Decision;

/**
 * The state of one key under one policy. Every method runs while holding the state's monitor; a retired state
 * has been forgotten by its table and must not be used again.
 */
abstract class KeyState {

	boolean retired;

	/** The latest instant a decision on this state used, in microseconds. */
	private long latest = Long.MIN_VALUE;

	/**
	 * Returns the instant a decision taken now, holding the monitor, uses: {@code read}, or the latest instant a
	 * decision on this state used if that is later. The time is read before the monitor is taken, so two
	 * concurrent decisions may hold times in the other order than they take the state; deciding at the earlier
	 * time after the later one could move a window back and admit a request twice.
	 */
	final long at(long read) {
		if (read > this.latest) {
			this.latest = read;
		}
		return this.latest;
	}

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
