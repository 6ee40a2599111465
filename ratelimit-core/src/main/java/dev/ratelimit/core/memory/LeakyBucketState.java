package dev.ratelimit.core.memory;

import dev.ratelimit.core.Decision;

/**
 * The queue of a leaky bucket, kept as the instant its last admitted request is done, {@code nextFree}:
 * admitted requests are served one per interval, so the requests still waiting at {@code now} are the slots
 * between {@code now} and {@code nextFree}, {@code ceil((nextFree - now) / interval) - 1} of them.
 */
final class LeakyBucketState extends ArrivalState {

	LeakyBucketState(long base, long nextFree) {
		super(base, nextFree);
	}

	@Override
	boolean allows(Rules rules, long held, long now) {
		return queued(rules, ahead(rules, held, now)) + rules.cost <= rules.burst;
	}

	@Override
	Decision describe(Rules rules, long word, long now, boolean allowed) {
		long ahead = ahead(rules, word, now);
		long remaining = Math.max(0, rules.burst - queued(rules, ahead));
		long retryAfter = 0;
		long delay = 0;
		if (allowed) {
			// this request's slot starts where it found nextFree; the first delayAfter slots are not waited for
			long slot = ahead - rules.cost * rules.interval;
			delay = slot - rules.delayAfter * rules.interval;
		}
		else {
			retryAfter = ahead - (rules.burst - rules.cost + 1) * rules.interval;
		}
		return new Decision(allowed, rules.limit, remaining, rules.ticksToNanos(retryAfter),
				rules.ticksToNanos(ahead), rules.ticksToNanos(delay), takenAt(allowed, now));
	}

	@Override
	PackedState rebased(Rules rules, long word, long now) {
		return new LeakyBucketState(now, ahead(rules, word, now));
	}

	private static long queued(Rules rules, long ahead) {
		return (ahead > 0) ? Rules.ceilDiv(ahead, rules.interval) - 1 : 0;
	}

}
