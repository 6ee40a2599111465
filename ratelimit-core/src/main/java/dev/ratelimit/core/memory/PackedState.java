package dev.ratelimit.core.memory;

import dev.ratelimit.core.Decision;

/**
 * A state packed into its word, relative to the instant {@code base} (microseconds) it was created at. A
 * decision on it alone reads the word, then the time, and takes the request with one compare-and-set, retried
 * if another decision changed the word meanwhile ({@link KeyState#backOff}): no decision holds the key while it decides,
 * and since the time is read after the word it is never earlier than that of the decision which wrote the word.
 * <p>
 * The word counts from {@code base} so that it fits in 62 bits; a state still in use after the span it can
 * count is replaced by an equivalent one {@link #rebased} at the current instant, which changes no decision.
 */
abstract class PackedState extends KeyState {

	/** The instant, in the store's microseconds, the word counts from. */
	final long base;

	PackedState(long base, long word) {
		super(word);
		this.base = base;
	}

	@Override
	final int tryAcquire(Rules rules, InMemoryRateLimitStore store) {
		for (int losses = 0;;) {
			long word = word();
			if (word == RETIRED) {
				return AGAIN;
			}
			if (word == HELD) {
				losses = backOff(losses);
				continue;
			}
			long now = store.now();
			if (needsRebase(rules, now)) {
				return AGAIN;
			}
			if (allows(rules, word, now)) {
				if (replace(word, take(rules, word, now))) {
					return ALLOWED;
				}
			}
			else if (word() == word) {
				// the word did not change while the time was read: the request is denied at that instant
				return DENIED;
			}
			losses = backOff(losses);
		}
	}

	@Override
	final Decision decide(Rules rules, InMemoryRateLimitStore store) {
		for (int losses = 0;;) {
			long word = word();
			if (word == RETIRED) {
				return null;
			}
			if (word == HELD) {
				losses = backOff(losses);
				continue;
			}
			long now = store.now();
			if (needsRebase(rules, now)) {
				return null;
			}
			if (allows(rules, word, now)) {
				long next = take(rules, word, now);
				if (replace(word, next)) {
					return describe(rules, next, now, true);
				}
			}
			else if (word() == word) {
				return describe(rules, word, now, false);
			}
			losses = backOff(losses);
		}
	}

	@Override
	final long at(long now) {
		return now;
	}

	/** A new state at {@code now} that decides every request as this one, whose word is {@code word}, would. */
	abstract PackedState rebased(Rules rules, long word, long now);

}
