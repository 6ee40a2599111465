package dev.ratelimit.core.memory;

import java.util.ArrayDeque;

import dev.ratelimit.core.Algorithm;

/**
 * The reference algorithms of {@code seed_algorithms.py}, one key at a time, on a time in whole milliseconds and
 * in integers, so that the sequential specifications of the linearizability tests decide exactly as the
 * reference does. Each one peeks ({@code commit} false) or takes a permit.
 */
abstract class ReferenceLimiter {

	final long limit;

	final long window;

	ReferenceLimiter(long limit, long window) {
		this.limit = limit;
		this.window = window;
	}

	static ReferenceLimiter of(Algorithm algorithm, long limit, long windowMillis) {
		return switch (algorithm) {
			case FIXED_WINDOW -> new FixedWindow(limit, windowMillis);
			case SLIDING_LOG -> new SlidingLog(limit, windowMillis);
			case SLIDING_WINDOW_COUNTER -> new SlidingWindowCounter(limit, windowMillis);
			case TOKEN_BUCKET -> new TokenBucket(limit, windowMillis);
			case LEAKY_BUCKET -> new LeakyBucket(limit, windowMillis);
			case GCRA -> new Gcra(limit, windowMillis);
		};
	}

	abstract boolean allow(long now, boolean commit);

	private static final class FixedWindow extends ReferenceLimiter {

		private long win = Long.MIN_VALUE;

		private long count;

		FixedWindow(long limit, long window) {
			super(limit, window);
		}

		@Override
		boolean allow(long now, boolean commit) {
			long w = Math.floorDiv(now, this.window);
			long used = (w == this.win) ? this.count : 0;
			if (used >= this.limit) {
				return false;
			}
			if (commit) {
				this.win = w;
				this.count = used + 1;
			}
			return true;
		}

	}

	private static final class SlidingLog extends ReferenceLimiter {

		private final ArrayDeque<Long> log = new ArrayDeque<>();

		SlidingLog(long limit, long window) {
			super(limit, window);
		}

		@Override
		boolean allow(long now, boolean commit) {
			while (!this.log.isEmpty() && this.log.peekFirst() <= now - this.window) {
				this.log.pollFirst();
			}
			if (this.log.size() >= this.limit) {
				return false;
			}
			if (commit) {
				this.log.addLast(now);
			}
			return true;
		}

	}

	private static final class SlidingWindowCounter extends ReferenceLimiter {

		private long win = Long.MIN_VALUE;

		private long cur;

		private long prev;

		SlidingWindowCounter(long limit, long window) {
			super(limit, window);
		}

		@Override
		boolean allow(long now, boolean commit) {
			long w = Math.floorDiv(now, this.window);
			if (w != this.win) {
				this.prev = (this.win == w - 1) ? this.cur : 0;
				this.cur = 0;
				this.win = w;
			}
			long elapsed = now - w * this.window;
			// prev * (1 - elapsed / window) + cur < limit, multiplied by the window
			if (this.prev * (this.window - elapsed) + this.cur * this.window >= this.limit * this.window) {
				return false;
			}
			if (commit) {
				this.cur++;
			}
			return true;
		}

	}

	/** Tokens are counted in 1 / window of a token, so that the refill of limit / window per ms is whole. */
	private static final class TokenBucket extends ReferenceLimiter {

		private long tokens;

		private long ts;

		TokenBucket(long limit, long window) {
			super(limit, window);
			this.tokens = limit * window;
		}

		@Override
		boolean allow(long now, boolean commit) {
			long refilled = Math.min(this.limit * this.window, this.tokens + (now - this.ts) * this.limit);
			if (refilled < this.window) {
				if (commit) {
					this.tokens = refilled;
					this.ts = now;
				}
				return false;
			}
			if (commit) {
				this.tokens = refilled - this.window;
				this.ts = now;
			}
			return true;
		}

	}

	private static final class LeakyBucket extends ReferenceLimiter {

		private final ArrayDeque<Long> doneAt = new ArrayDeque<>();

		private long nextFree;

		LeakyBucket(long limit, long window) {
			super(limit, window);
		}

		@Override
		boolean allow(long now, boolean commit) {
			long queued = this.doneAt.stream().filter((t) -> t > now).count();
			if (queued >= this.limit) {
				return false;
			}
			if (commit) {
				long start = Math.max(now, this.nextFree);
				this.nextFree = start + this.window / this.limit;
				this.doneAt.addLast(start);
			}
			return true;
		}

	}

	private static final class Gcra extends ReferenceLimiter {

		private long tat;

		Gcra(long limit, long window) {
			super(limit, window);
		}

		@Override
		boolean allow(long now, boolean commit) {
			long interval = this.window / this.limit;
			long at = Math.max(this.tat, now);
			if (at - now > interval * (this.limit - 1)) {
				return false;
			}
			if (commit) {
				this.tat = at + interval;
			}
			return true;
		}

	}

}
