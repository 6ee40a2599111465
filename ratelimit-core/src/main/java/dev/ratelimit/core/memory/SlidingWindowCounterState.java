package dev.ratelimit.core.memory;

import dev.ratelimit.core.Decision;

/**
 * The counts of the current and the previous aligned window. The estimate
 * {@code previous * (1 - elapsed / window) + current} is compared multiplied by the window, so it stays exact.
 */
final class SlidingWindowCounterState extends LockedState {

	private long window = Long.MIN_VALUE;

	private long previous;

	private long current;

	@Override
	boolean acquire(Rules rules, long now, boolean commit) {
		long elapsed = roll(rules, now);
		// estimate < limit - cost + 1, so that a cost of 1 reads exactly as "estimate < limit"
		boolean allowed = fits(rules, elapsed);
		if (allowed && commit) {
			this.current += rules.cost;
		}
		return allowed;
	}

	@Override
	Decision describe(Rules rules, long now, boolean allowed) {
		long elapsed = roll(rules, now);
		long headroom = rules.limit * rules.window - weighted(rules, elapsed);
		long remaining = (headroom > 0) ? Rules.ceilDiv(headroom, rules.window) : 0;
		long retryAfter = (allowed || fits(rules, elapsed)) ? 0 : retryAfter(rules, elapsed);
		long resetAfter = (this.current > 0) ? 2 * rules.window - elapsed
				: (this.previous > 0) ? rules.window - elapsed : 0;
		return new Decision(allowed, rules.limit, remaining, rules.microsToNanos(retryAfter),
				rules.microsToNanos(resetAfter), 0, takenAt(allowed, now));
	}

	@Override
	void giveBack(Rules rules, long now, long takenAt) {
		// counted in the current window while it lasts, then in the previous one; after that it weighs no more
		roll(rules, now);
		long taken = Math.floorDiv(takenAt, rules.window);
		if (taken == this.window) {
			this.current = Math.max(0, this.current - rules.cost);
		}
		else if (taken == this.window - 1) {
			this.previous = Math.max(0, this.previous - rules.cost);
		}
	}

	@Override
	boolean idleSince(Rules rules, long since) {
		// the current count weighs on the next window too, the previous one on the current window only
		long index = Math.floorDiv(since, rules.window);
		return (this.current == 0 || index >= this.window + 2) && (this.previous == 0 || index >= this.window + 1);
	}

	/** Moves to the window of {@code now} and returns how far into it {@code now} is. */
	private long roll(Rules rules, long now) {
		long index = Math.floorDiv(now, rules.window);
		if (index != this.window) {
			this.previous = (index - 1 == this.window) ? this.current : 0;
			this.current = 0;
			this.window = index;
		}
		return now - index * rules.window;
	}

	private boolean fits(Rules rules, long elapsed) {
		return weighted(rules, elapsed) < (rules.limit - rules.cost + 1) * rules.window;
	}

	private long weighted(Rules rules, long elapsed) {
		return this.previous * (rules.window - elapsed) + this.current * rules.window;
	}

	/**
	 * The first microsecond at which {@code previous * (window - e) + current * window < threshold * window}
	 * holds, either later in this window or, once the current count has become the previous one, in the next.
	 */
	private long retryAfter(Rules rules, long elapsed) {
		long threshold = rules.limit - rules.cost + 1;
		long headroom = threshold - this.current;
		if (headroom > 0 && this.previous > 0) {
			long at = rules.window - Rules.ceilDiv(headroom * rules.window, this.previous) + 1;
			if (at < rules.window) {
				return at - elapsed;
			}
		}
		if (this.current < threshold) {
			return rules.window - elapsed;
		}
		long at = rules.window - Rules.ceilDiv(threshold * rules.window, this.current) + 1;
		return rules.window - elapsed + at;
	}

}
