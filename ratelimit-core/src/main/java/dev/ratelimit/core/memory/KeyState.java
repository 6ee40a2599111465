package dev.ratelimit.core.memory;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;

import dev.ratelimit.core.Decision;

/**
 * The state of one key under one policy, around one word that every concurrent access goes through.
 * <p>
 * A {@link PackedState} keeps its whole state in the word and decides a request alone with one
 * compare-and-set, so no decision holds the key while it decides. A {@link LockedState} keeps its state in
 * fields and uses the word as a lock. Either way {@link #hold()} takes the word for a while: a stacked decision
 * holds the states of several policies at once, and the sweep holds a state to retire it. A retired state has
 * been forgotten or replaced by its table and must not be used again: the key is looked up again.
 */
abstract class KeyState {

	/** The word while a caller holds the state. */
	static final long HELD = Long.MIN_VALUE;

	/** The word of a state its table has forgotten or replaced, for good. */
	static final long RETIRED = Long.MIN_VALUE + 1;

	/** What {@link #tryAcquire} returns when the state cannot decide: the key must be looked up again. */
	static final int AGAIN = -1;

	static final int DENIED = 0;

	static final int ALLOWED = 1;

	private static final int RETRIES_BEFORE_PARKING = 2;

	/** Set on the thread of a caller that must not wait while the store decides for it. */
	private static final ThreadLocal<Boolean> MUST_NOT_WAIT = new ThreadLocal<>();

	private static final VarHandle WORD;

	static {
		try {
			WORD = MethodHandles.lookup().findVarHandle(KeyState.class, "word", long.class);
		}
		catch (ReflectiveOperationException ex) {
			throw new ExceptionInInitializerError(ex);
		}
	}

	private volatile long word;

	/**
	 * Until when, in the store's microseconds, a policy with a penalty refuses the key; 0 if it never refused
	 * it. Read and written only while the state is held.
	 */
	long blockedUntil;

	KeyState(long word) {
		this.word = word;
	}

	/** Reads the word; {@link #HELD} while a caller holds the state. */
	final long word() {
		return this.word;
	}

	final boolean replace(long expected, long next) {
		return WORD.compareAndSet(this, expected, next);
	}

	/**
	 * Waits until no one else holds the state, then holds it.
	 * @return the word it held before, or {@link #RETIRED}, in which case the state is not held
	 */
	final long hold() {
		for (int losses = 0;;) {
			long current = this.word;
			if (current == RETIRED) {
				return RETIRED;
			}
			if (current != HELD && replace(current, HELD)) {
				return current;
			}
			losses = backOff(losses);
		}
	}

	/** Gives a held state back with {@code next} as its word, or retires it for good with {@link #RETIRED}. */
	final void release(long next) {
		WORD.setRelease(this, next);
	}

	/**
	 * Waits after losing the word to another thread for the {@code losses}-th time in a row in one call, and
	 * returns the count of losses so far. The first losses retry at once: over many keys two threads meet on
	 * one only now and then, and the next try wins. After that the key is hot, and the loser parks for the
	 * shortest time the system grants, as Resilience4j's atomic limiter does, so that the winner goes on
	 * undisturbed: threads that keep retrying, or only spin between tries, move the word between their caches
	 * each time and decide at a third of one thread's rate. A caller that {@link #withoutWaiting must not wait},
	 * such as an event loop, retries at once every time instead: slower on a hot key, but it never parks.
	 */
	static int backOff(int losses) {
		if (MUST_NOT_WAIT.get() != null) {
			return losses + 1;
		}
		if (losses < RETRIES_BEFORE_PARKING) {
			Thread.onSpinWait();
		}
		else {
			LockSupport.parkNanos(1);
		}
		return losses + 1;
	}

	/** Runs {@code work} on this thread with every lost race retried at once, never parking. */
	static <T> T withoutWaiting(Supplier<T> work) {
		MUST_NOT_WAIT.set(Boolean.TRUE);
		try {
			return work.get();
		}
		finally {
			MUST_NOT_WAIT.remove();
		}
	}

	/**
	 * Decides one request on this state alone, reading the time from {@code store}.
	 * @return {@link #ALLOWED}, {@link #DENIED}, or {@link #AGAIN} if the state was retired or must be rebased
	 */
	abstract int tryAcquire(Rules rules, InMemoryRateLimitStore store);

	/** Decides and describes one request on this state alone; null if the key must be looked up again. */
	abstract Decision decide(Rules rules, InMemoryRateLimitStore store);

	/** Whether the state cannot represent {@code now} and must be {@link PackedState#rebased rebased} first. */
	abstract boolean needsRebase(Rules rules, long now);

	/**
	 * The instant a decision on this held state takes at: {@code now}, or a later instant a decision on it has
	 * used already.
	 */
	abstract long at(long now);

	/** Whether a request at {@code now} is allowed by the held state, whose word was {@code held}. */
	abstract boolean allows(Rules rules, long held, long now);

	/** Takes an allowed request's cost from the held state and returns the word to release it with. */
	abstract long take(Rules rules, long held, long now);

	/** Describes the held state, whose word is now {@code word}, right after a request was taken or denied. */
	abstract Decision describe(Rules rules, long word, long now, boolean allowed);

	/**
	 * Gives back at {@code now} the cost of a request that the held state, whose word was {@code held}, took at
	 * {@code takenAt}, never leaving it more lenient than if the request had never been taken; returns the word
	 * to release it with.
	 */
	abstract long giveBack(Rules rules, long held, long now, long takenAt);

	/** What a decision at {@code now} reports as {@link Decision#takenAt()}. */
	static long takenAt(boolean allowed, long now) {
		return allowed ? now : Decision.NOT_TAKEN;
	}

	/**
	 * Whether the held state, whose word is {@code word}, has decided every request from {@code since} on as
	 * a new one would, and still does: it took nothing after {@code since}, and what it took before has
	 * expired by then. Such a state can be forgotten without changing any decision.
	 */
	abstract boolean idleSince(Rules rules, long word, long since);

}
