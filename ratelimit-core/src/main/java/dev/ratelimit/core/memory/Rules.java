package dev.ratelimit.core.memory;

import java.math.BigInteger;

import dev.ratelimit.core.CalendarWindow;
import dev.ratelimit.core.RateLimitPolicy;
import org.jspecify.annotations.Nullable;

/**
 * A policy turned into the integers its algorithm computes with. Time is in microseconds; the bucket
 * algorithms count in ticks of {@code 1 / scale} microsecond so that the emission interval
 * {@code window / limit} is a whole number of ticks and every decision is exact.
 */
final class Rules {

	/** A packed state's word stays below this, well clear of the negative words that mark a held state. */
	private static final long WORD_RANGE = 1L << 62;

	final RateLimitPolicy policy;

	final long limit;

	final long window;

	final long burst;

	final long cost;

	final long delayAfter;

	/** Ticks per microsecond. */
	final long scale;

	/** The emission interval {@code window / limit}, in ticks. */
	final long interval;

	/** How long a request may wait for its permits, in ticks: how far past the burst it may reserve. */
	final long maxWait;

	/** How long a key stays refused once the policy refused it, in microseconds; 0 for no penalty. */
	final long penalty;

	/**
	 * How long after its base an arrival state's word, in ticks, still fits in 62 bits with the farthest
	 * instant a decision of any cost, up to the capacity, stores ahead of now: the same for every cost of a
	 * policy, whose states they share.
	 */
	final long arrivalSpan;

	/** The bits of a fixed window's word that hold its count, which is at most the limit. */
	final int countBits;

	final long countMask;

	/** The last window, counted from a fixed window state's base, that its word can hold. */
	final long maxWindowIndex;

	/** The periods of the policy's calendar, null for windows aligned to the store's creation. */
	private final @Nullable CalendarPeriods periods;

	/**
	 * The rules of {@code policy} in a store whose clock reads 0 at {@code wallOrigin} microseconds since the
	 * Unix epoch.
	 */
	Rules(RateLimitPolicy policy, long wallOrigin) {
		this.policy = policy;
		CalendarWindow calendar = policy.calendar();
		this.periods = (calendar != null) ? new CalendarPeriods(calendar, wallOrigin) : null;
		this.limit = policy.limit();
		this.window = policy.windowMicros();
		this.burst = policy.burst();
		this.cost = policy.cost();
		this.delayAfter = policy.delayAfter();
		long gcd = BigInteger.valueOf(this.window).gcd(BigInteger.valueOf(this.limit)).longValue();
		this.scale = this.limit / gcd;
		this.interval = this.window / gcd;
		this.maxWait = policy.maxWaitMicros() * this.scale;
		this.penalty = policy.penaltyMicros();
		// a reservation reaches at most a window, limit intervals, past the burst
		long farthest = 2 * (this.burst + policy.capacity() + this.limit + 1) * this.interval;
		this.arrivalSpan = (WORD_RANGE - farthest) / this.scale;
		this.countBits = Long.SIZE - Long.numberOfLeadingZeros(this.limit);
		this.countMask = (1L << this.countBits) - 1;
		this.maxWindowIndex = (WORD_RANGE >>> this.countBits) - 1;
	}

	/** A new state, as of {@code now}, for a key never seen or forgotten. */
	KeyState newState(long now) {
		return switch (this.policy.algorithm()) {
			case FIXED_WINDOW -> new FixedWindowState(this, now, 0);
			case SLIDING_LOG -> new SlidingLogState();
			case SLIDING_WINDOW_COUNTER -> new SlidingWindowCounterState();
			case TOKEN_BUCKET, GCRA -> new ArrivalState(now, 0);
			case LEAKY_BUCKET -> new LeakyBucketState(now, 0);
		};
	}

	/** The index of the fixed window of {@code now}: its period's for a calendar's. */
	long windowIndex(long now) {
		return (this.periods != null) ? this.periods.at(now).index() : Math.floorDiv(now, this.window);
	}

	/** How long from {@code now} until the next fixed window starts. */
	long untilNextWindow(long now) {
		if (this.periods != null) {
			return this.periods.at(now).end() - now;
		}
		return (Math.floorDiv(now, this.window) + 1) * this.window - now;
	}

	long microsToNanos(long micros) {
		return micros * 1000;
	}

	/** Rounds up, so that a wait is never reported shorter than it is. */
	long ticksToNanos(long ticks) {
		return (ticks <= 0) ? 0 : ceilDiv(ticks * 1000, this.scale);
	}

	static long ceilDiv(long dividend, long divisor) {
		return -Math.floorDiv(-dividend, divisor);
	}

}
