package dev.ratelimit.core.memory;

import dev.ratelimit.core.Decision;

/**
 * One instant per key, in ticks after {@code base}: for GCRA the theoretical arrival time, for the token bucket
 * the instant the bucket is full again (the token count is {@code burst - (full - now) / interval}). Both
 * therefore take the same decisions, as they do in the reference. The leaky bucket keeps the instant its queue
 * is empty the same way.
 * <p>
 * A request that may wait ({@link dev.ratelimit.core.RateLimitPolicy#maxWait()}) reserves its permits: it moves
 * the instant on past the burst, by at most its wait, and goes ahead once the instant it found is back within the
 * burst. The requests after it find the instant that far ahead, and queue behind it.
 */
class ArrivalState extends PackedState {

	ArrivalState(long base, long word) {
		super(base, word);
	}

	@Override
	boolean allows(Rules rules, long held, long now) {
		return ahead(rules, held, now) <= (rules.burst - rules.cost) * rules.interval + rules.maxWait;
	}

	@Override
	final long take(Rules rules, long held, long now) {
		return (now - this.base) * rules.scale + ahead(rules, held, now) + rules.cost * rules.interval;
	}

	@Override
	Decision describe(Rules rules, long word, long now, boolean allowed) {
		long ahead = ahead(rules, word, now);
		long remaining = Math.max(0, (rules.burst * rules.interval - ahead) / rules.interval);
		long retryAfter = allowed ? 0 : ahead - (rules.burst - rules.cost) * rules.interval - rules.maxWait;
		// a reservation goes ahead once the instant it found, cost intervals back, is within the burst again
		long delay = allowed ? ahead - rules.burst * rules.interval : 0;
		return new Decision(allowed, rules.limit, remaining, rules.ticksToNanos(retryAfter),
				rules.ticksToNanos(ahead), rules.ticksToNanos(delay), takenAt(allowed, now));
	}

	/**
	 * Moves the instant back by the cost less the time since the request was taken, never before now. A
	 * request taken later on a bucket that would have been full without this one started from now, not from
	 * the instant: giving the whole cost back then would leave the bucket fuller than if this request had never
	 * been taken, and the time since it was taken bounds how much such requests absorbed.
	 */
	@Override
	final long giveBack(Rules rules, long held, long now, long takenAt) {
		long ahead = ahead(rules, held, now);
		if (ahead == 0 || now - takenAt >= Rules.ceilDiv(rules.cost * rules.interval, rules.scale)) {
			return held;
		}
		long returned = rules.cost * rules.interval - (now - takenAt) * rules.scale;
		return (now - this.base) * rules.scale + Math.max(0, ahead - returned);
	}

	@Override
	final boolean idleSince(Rules rules, long word, long since) {
		// the stored instant is word / scale microseconds after base; a state created after since is in use
		return since >= this.base && Rules.ceilDiv(word, rules.scale) <= since - this.base;
	}

	@Override
	final boolean needsRebase(Rules rules, long now) {
		return now - this.base > rules.arrivalSpan;
	}

	@Override
	PackedState rebased(Rules rules, long word, long now) {
		return new ArrivalState(now, ahead(rules, word, now));
	}

	/**
	 * How far the stored instant lies after {@code now}, in ticks; 0 if it has passed. An instant more than a
	 * microsecond past is known to have passed before counting ticks: in ticks, the time since {@code base} of
	 * a key left idle for twice the span its word counts overflows a long.
	 */
	final long ahead(Rules rules, long word, long now) {
		if (now - this.base > Rules.ceilDiv(word, rules.scale)) {
			return 0;
		}
		return Math.max(0, word - (now - this.base) * rules.scale);
	}

}
