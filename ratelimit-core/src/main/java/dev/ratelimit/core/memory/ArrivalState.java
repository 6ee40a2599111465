package dev.ratelimit.core.memory;

import dev.ratelimit.core.Decision;

/**
 * One instant per key, stored as whole microseconds plus ticks: for GCRA the theoretical arrival time, for the
 * token bucket the instant the bucket is full again (the token count is {@code burst - (full - now) / interval}).
 * Both therefore take the same decisions, as they do in the reference.
 */
final class ArrivalState extends KeyState {

	private long micros;

	private long ticks;

	@Override
	boolean acquire(Rules rules, long now, boolean commit) {
		long ahead = ahead(rules, now);
		boolean allowed = ahead <= (rules.burst - rules.cost) * rules.interval;
		if (allowed && commit) {
			set(rules, now, ahead + rules.cost * rules.interval);
		}
		return allowed;
	}

	@Override
	Decision describe(Rules rules, long now, boolean allowed) {
		long ahead = ahead(rules, now);
		long remaining = Math.max(0, (rules.burst * rules.interval - ahead) / rules.interval);
		long retryAfter = allowed ? 0 : ahead - (rules.burst - rules.cost) * rules.interval;
		return new Decision(allowed, rules.limit, remaining, rules.ticksToNanos(retryAfter),
				rules.ticksToNanos(ahead), 0);
	}

	@Override
	boolean isIdle(Rules rules, long now) {
		return ahead(rules, now) == 0;
	}

	/** How far the stored instant lies after {@code now}, in ticks; 0 if it has passed. */
	long ahead(Rules rules, long now) {
		return (this.micros < now) ? 0 : (this.micros - now) * rules.scale + this.ticks;
	}

	void set(Rules rules, long now, long ticksAfterNow) {
		// a 64-bit division costs more than the rest of a decision: skip it when the instant is less than a
		// microsecond ahead, as it is on a busy key of a fast policy, or when ticks are microseconds
		if (ticksAfterNow < rules.scale) {
			this.micros = now;
			this.ticks = ticksAfterNow;
		}
		else if (rules.scale == 1) {
			this.micros = now + ticksAfterNow;
			this.ticks = 0;
		}
		else {
			this.micros = now + ticksAfterNow / rules.scale;
			this.ticks = ticksAfterNow % rules.scale;
		}
	}

}
