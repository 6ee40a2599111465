package dev.ratelimit.core.memory;

import dev.ratelimit.core.Decision;

/**
 * The times of the allowed requests still inside the window, oldest first, in a ring that grows on demand up
 * to the limit and never beyond it.
 */
final class SlidingLogState extends LockedState {

	private static final int INITIAL_CAPACITY = 4;

	private long[] ring = new long[0];

	private int head;

	private int size;

	@Override
	boolean acquire(Rules rules, long now, boolean commit) {
		expire(rules, now);
		boolean allowed = this.size + rules.cost <= rules.limit;
		if (allowed && commit) {
			ensureCapacity(rules, this.size + (int) rules.cost);
			for (long i = 0; i < rules.cost; i++) {
				this.ring[(this.head + this.size) % this.ring.length] = now;
				this.size++;
			}
		}
		return allowed;
	}

	@Override
	Decision describe(Rules rules, long now, boolean allowed) {
		expire(rules, now);
		// the request fits once enough of the oldest entries have left the window
		int mustExpire = (int) (this.size + rules.cost - rules.limit);
		long retryAfter = (!allowed && mustExpire > 0) ? at(mustExpire - 1) + rules.window - now : 0;
		long resetAfter = (this.size > 0) ? at(this.size - 1) + rules.window - now : 0;
		return new Decision(allowed, rules.limit, rules.limit - this.size, rules.microsToNanos(retryAfter),
				rules.microsToNanos(resetAfter), 0, takenAt(allowed, now));
	}

	@Override
	void giveBack(Rules rules, long now, long takenAt) {
		// the request's own entries: dropping the newest instead would free a permit before its time
		expire(rules, now);
		long dropped = 0;
		int kept = 0;
		for (int i = 0; i < this.size; i++) {
			long time = at(i);
			if (time == takenAt && dropped < rules.cost) {
				dropped++;
			}
			else {
				this.ring[(this.head + kept++) % this.ring.length] = time;
			}
		}
		this.size = kept;
	}

	@Override
	boolean idleSince(Rules rules, long since) {
		// the newest entry leaves the window at its time plus the window
		return this.size == 0 || at(this.size - 1) <= since - rules.window;
	}

	private void expire(Rules rules, long now) {
		while (this.size > 0 && this.ring[this.head] <= now - rules.window) {
			this.head = (this.head + 1) % this.ring.length;
			this.size--;
		}
	}

	private long at(int index) {
		return this.ring[(this.head + index) % this.ring.length];
	}

	private void ensureCapacity(Rules rules, int needed) {
		if (needed <= this.ring.length) {
			return;
		}
		int capacity = (int) Math.min(rules.limit, Math.max(needed, Math.max(INITIAL_CAPACITY, this.ring.length * 2L)));
		long[] grown = new long[capacity];
		for (int i = 0; i < this.size; i++) {
			grown[i] = at(i);
		}
		this.ring = grown;
		this.head = 0;
	}

}
