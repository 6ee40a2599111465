package dev.ratelimit.core.memory;

import dev.ratelimit.core.Decision;

/** A counter for the current aligned window. */
final class FixedWindowState extends KeyState {

	private long window = Long.MIN_VALUE;

	private long count;

	@Override
	boolean acquire(Rules rules, long now, boolean commit) {
		long current = Math.floorDiv(now, rules.window);
		long used = (current == this.window) ? this.count : 0;
		boolean allowed = used + rules.cost <= rules.limit;
		if (allowed && commit) {
			this.window = current;
			this.count = used + rules.cost;
		}
		return allowed;
	}

	@Override
	Decision describe(Rules rules, long now, boolean allowed) {
		long current = Math.floorDiv(now, rules.window);
		long used = (current == this.window) ? this.count : 0;
		long untilNextWindow = rules.microsToNanos((current + 1) * rules.window - now);
		boolean waits = !allowed && used + rules.cost > rules.limit;
		return new Decision(allowed, rules.limit, rules.limit - used, waits ? untilNextWindow : 0,
				(used > 0) ? untilNextWindow : 0, 0);
	}

	@Override
	boolean isIdle(Rules rules, long now) {
		return this.count == 0 || this.window != Math.floorDiv(now, rules.window);
	}

}
