package dev.ratelimit.core.memory;

import java.util.Arrays;
import java.util.Comparator;

/**
 * The states of the limits of one stacked request, held together. Every stack holds its states in one global
 * order, by table and then by key, so that two stacks sharing states never wait for each other in a cycle. Two
 * limits of one table whose keys both fall into its shared overflow state find the same state: it is held,
 * decided and charged once.
 */
final class HeldStates {

	final PolicyTable[] tables;

	final String[] keys;

	final KeyState[] states;

	/** The word each state held before, or the word to release it with once it has been changed. */
	final long[] held;

	/** For each limit, the first limit with the same state: itself unless the overflow state is shared. */
	final int[] first;

	private final Integer[] holdOrder;

	private int holding;

	HeldStates(PolicyTable[] tables, String[] keys) {
		this.tables = tables;
		this.keys = keys;
		this.states = new KeyState[tables.length];
		this.held = new long[tables.length];
		this.first = new int[tables.length];
		this.holdOrder = new Integer[tables.length];
		Arrays.setAll(this.holdOrder, (i) -> i);
		Arrays.sort(this.holdOrder, Comparator.<Integer>comparingInt((i) -> tables[i].keys.id).thenComparing((i) -> keys[i]));
	}

	/**
	 * Looks every state up and holds them one by one in the global order, then reads the time; returns it, or
	 * {@link KeyState#RETIRED} if one state was retired or had to be rebased, and the states must be looked up
	 * again. On success the caller must {@link #release()} them.
	 */
	long hold(InMemoryRateLimitStore store) {
		for (int i = 0; i < this.states.length; i++) {
			this.states[i] = this.tables[i].keys.state(this.keys[i]);
			this.first[i] = i;
			for (int j = 0; j < i; j++) {
				if (this.states[j] == this.states[i]) {
					this.first[i] = j;
					break;
				}
			}
		}
		for (this.holding = 0; this.holding < this.holdOrder.length; this.holding++) {
			int i = this.holdOrder[this.holding];
			if (this.first[i] != i) {
				continue;
			}
			this.held[i] = this.states[i].hold();
			if (this.held[i] == KeyState.RETIRED) {
				release();
				return KeyState.RETIRED;
			}
		}
		long now = store.now();
		for (int i = 0; i < this.states.length; i++) {
			if (this.first[i] == i && this.states[i].needsRebase(this.tables[i].rules, now)) {
				release();
				this.tables[i].keys.rebase(this.keys[i], this.states[i]);
				return KeyState.RETIRED;
			}
		}
		// no earlier than any state has seen
		long at = now;
		for (KeyState state : this.states) {
			at = state.at(at);
		}
		for (KeyState state : this.states) {
			state.at(at);
		}
		return at;
	}

	/** Releases the states held so far, in the reverse order, each with its word in {@link #held}. */
	void release() {
		for (int k = this.holding - 1; k >= 0; k--) {
			int i = this.holdOrder[k];
			if (this.first[i] == i) {
				this.states[i].release(this.held[i]);
			}
		}
		this.holding = 0;
	}

}
