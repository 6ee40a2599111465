package dev.ratelimit.core.memory;

import dev.ratelimit.core.Decision;

/**
 * A state kept in fields, which only the holder of the word reads or writes. The time is read before the state
 * is held, so two concurrent decisions may hold times in the other order than they hold the state: each decides
 * at the latest instant the state has seen, since deciding at an earlier one could move a window back and admit
 * a request twice.
 */
abstract class LockedState extends KeyState {

	private static final long FREE = 0;

	/** The latest instant a decision on this state used, in microseconds. */
	private long latest = Long.MIN_VALUE;

	LockedState() {
		super(FREE);
	}

	@Override
	final int tryAcquire(Rules rules, InMemoryRateLimitStore store) {
		long read = store.now();
		if (hold() == RETIRED) {
			return AGAIN;
		}
		try {
			return acquire(rules, at(read), true) ? ALLOWED : DENIED;
		}
		finally {
			release(FREE);
		}
	}

	@Override
	final Decision decide(Rules rules, InMemoryRateLimitStore store) {
		long read = store.now();
		if (hold() == RETIRED) {
			return null;
		}
		try {
			long now = at(read);
			return describe(rules, now, acquire(rules, now, true));
		}
		finally {
			release(FREE);
		}
	}

	@Override
	final boolean needsRebase(Rules rules, long now) {
		return false;
	}

	@Override
	final long at(long now) {
		if (now > this.latest) {
			this.latest = now;
		}
		return this.latest;
	}

	@Override
	final boolean allows(Rules rules, long held, long now) {
		return acquire(rules, now, false);
	}

	@Override
	final long take(Rules rules, long held, long now) {
		acquire(rules, now, true);
		return FREE;
	}

	@Override
	final Decision describe(Rules rules, long word, long now, boolean allowed) {
		return describe(rules, now, allowed);
	}

	@Override
	final long giveBack(Rules rules, long held, long now, long takenAt) {
		giveBack(rules, now, takenAt);
		return FREE;
	}

	@Override
	final boolean idleSince(Rules rules, long word, long since) {
		return idleSince(rules, since);
	}

	/**
	 * Whether a request at {@code now} (microseconds) is allowed; takes its cost when {@code commit} is set and
	 * it is. Work that does not change any future decision, such as dropping expired entries, may happen
	 * either way.
	 */
	abstract boolean acquire(Rules rules, long now, boolean commit);

	/** Describes the state at {@code now}, right after a request was allowed and taken, or denied. */
	abstract Decision describe(Rules rules, long now, boolean allowed);

	/** {@link KeyState#giveBack}, for the state in the fields. */
	abstract void giveBack(Rules rules, long now, long takenAt);

	/** {@link KeyState#idleSince}, for the state in the fields. */
	abstract boolean idleSince(Rules rules, long since);

}
