package dev.ratelimit.core.memory;

import dev.ratelimit.core.Decision;

/**
 * The queue of a leaky bucket, kept as the instant its last admitted request is done, {@code nextFree}:
 * admitted requests are served one per interval, so the requests still waiting at {@code now} are the slots
 * between {@code now} and {@code nextFree}, {@code ceil((nextFree - now) / interval) - 1} of them.
 */
final class LeakyBucketState extends KeyState {

	private final ArrivalState nextFree = new ArrivalState();

	@Override
	boolean acquire(Rules rules, long now, boolean commit) {
		long ahead = this.nextFree.ahead(rules, now);
		boolean allowed = queued(rules, ahead) + rules.cost <= rules.burst;
		if (allowed && commit) {
			this.nextFree.set(rules, now, ahead + rules.cost * rules.interval);
		}
		return allowed;
	}

	@Override
	Decision describe(Rules rules, long now, boolean allowed) {
		long ahead = this.nextFree.ahead(rules, now);
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
				rules.ticksToNanos(ahead), rules.ticksToNanos(delay));
	}

	@Override
	boolean isIdle(Rules rules, long now) {
		return this.nextFree.isIdle(rules, now);
	}

	private static long queued(Rules rules, long ahead) {
		return (ahead > 0) ? Rules.ceilDiv(ahead, rules.interval) - 1 : 0;
	}

}
