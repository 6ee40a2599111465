package dev.ratelimit.core.memory;

import dev.ratelimit.core.Decision;

/**
 * A counter for the current aligned window, or calendar period, packed as
 * {@code (window index - base index) << countBits | count}, where the base index is that of the window
 * {@code base} falls in and {@code countBits} holds the limit.
 */
final class FixedWindowState extends PackedState {

	private final long baseIndex;

	FixedWindowState(Rules rules, long base, long word) {
		super(base, word);
		this.baseIndex = rules.windowIndex(base);
	}

	@Override
	boolean allows(Rules rules, long held, long now) {
		return used(rules, held, now) + rules.cost <= rules.limit;
	}

	@Override
	long take(Rules rules, long held, long now) {
		return (index(rules, now) << rules.countBits) | (used(rules, held, now) + rules.cost);
	}

	@Override
	Decision describe(Rules rules, long word, long now, boolean allowed) {
		long used = used(rules, word, now);
		long untilNextWindow = rules.microsToNanos(rules.untilNextWindow(now));
		boolean waits = !allowed && used + rules.cost > rules.limit;
		return new Decision(allowed, rules.limit, rules.limit - used, waits ? untilNextWindow : 0,
				(used > 0) ? untilNextWindow : 0, 0, takenAt(allowed, now));
	}

	@Override
	long giveBack(Rules rules, long held, long now, long takenAt) {
		// a count of a window that has ended counts no more: giving it back to the new one would add permits
		long used = used(rules, held, now);
		if (used == 0 || rules.windowIndex(takenAt) != rules.windowIndex(now)) {
			return held;
		}
		return (index(rules, now) << rules.countBits) | Math.max(0, used - rules.cost);
	}

	@Override
	boolean idleSince(Rules rules, long word, long since) {
		// a count of a window after that of since was taken after it
		return since >= this.base && ((word & rules.countMask) == 0 || (word >>> rules.countBits) < index(rules, since));
	}

	@Override
	boolean needsRebase(Rules rules, long now) {
		return index(rules, now) > rules.maxWindowIndex;
	}

	@Override
	PackedState rebased(Rules rules, long word, long now) {
		return new FixedWindowState(rules, now, used(rules, word, now));
	}

	/** The window of {@code now}, counted from the base index. */
	private long index(Rules rules, long now) {
		return rules.windowIndex(now) - this.baseIndex;
	}

	/** The count of the window of {@code now}: the stored one if it is that window's, else 0. */
	private long used(Rules rules, long word, long now) {
		return ((word >>> rules.countBits) == index(rules, now)) ? word & rules.countMask : 0;
	}

}
