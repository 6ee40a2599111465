package dev.ratelimit.core.redis;

import java.util.List;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import dev.ratelimit.core.internal.PolicyLimiters;


/**
 * Tells Redis, once it answers again, what the failure policy admitted on this instance meanwhile, which Redis
 * never heard of: for each key owed, one decision of the permits admitted (or of what is left, if fewer), so that
 * Redis counts them for every instance of the fleet and does not hand the whole limit out again once it is back.
 * It runs on the store's scheduler, {@value #KEYS_PER_ROUND} keys at a time, from the first reply within the
 * timeout after the failure policy admitted something; a key whose call fails is owed again.
 * <p>
 * A key still in use on this instance is left to its own next decision, which tells Redis before it decides:
 * told from here, Redis could decide that key's calls sent meanwhile without counting what it was about to be
 * told, and admit them beyond the limit. A round therefore tells only the keys that admitted nothing for
 * {@link #QUIET_NANOS}, and comes back for the others once they have been quiet that long.
 */
final class Settlement {

	/** How many keys one round tells Redis of, so that a round never holds the scheduler long. */
	static final int KEYS_PER_ROUND = 100;

	/** How long a key must have admitted nothing without Redis for a round to tell Redis of it. */
	static final long QUIET_NANOS = TimeUnit.SECONDS.toNanos(1);

	private final KnownStates known;

	private final PolicyLimiters<RedisLimiter> transitions;

	private final DecisionCalls calls;

	private final ScheduledExecutorService executor;

	private final AtomicBoolean running = new AtomicBoolean();

	/** Whether a round is due once the keys left out of the last have been quiet. */
	private final AtomicBoolean due = new AtomicBoolean();

	Settlement(KnownStates known, PolicyLimiters<RedisLimiter> transitions, DecisionCalls calls,
			ScheduledExecutorService executor) {
		this.known = known;
		this.transitions = transitions;
		this.calls = calls;
		this.executor = executor;
	}

	/** Redis answered in time: a round starts if something is owed and no round is under way. */
	void settle() {
		if (!this.known.owing() || !this.running.compareAndSet(false, true)) {
			return;
		}
		try {
			this.executor.execute(this::round);
		}
		catch (RejectedExecutionException ex) {
			// the store is closing
			this.running.set(false);
		}
	}

	private void round() {
		try {
			for (KnownStates.Known owed : this.known.owed(KEYS_PER_ROUND, this.known.now(), QUIET_NANOS)) {
				long permits = owed.claim(this.known.now());
				if (permits > 0) {
					boolean told = false;
					try {
						tell(owed, permits);
						told = true;
					}
					finally {
						this.known.settled(owed, permits, told);
					}
				}
			}
			comeBack();
		}
		catch (ScriptCaller.CallFailure failure) {
			// owed again, and told from the next reply in time
		}
		finally {
			this.running.set(false);
		}
	}

	/** Comes back for the keys the round left out, if any, once they may have been quiet long enough. */
	private void comeBack() {
		if (!this.known.owing() || !this.due.compareAndSet(false, true)) {
			return;
		}
		try {
			this.executor.schedule(() -> {
				this.due.set(false);
				settle();
			}, QUIET_NANOS, TimeUnit.NANOSECONDS);
		}
		catch (RejectedExecutionException ex) {
			// the store is closing
			this.due.set(false);
		}
	}

	/** Takes {@code permits} from the key in Redis, or what is left if fewer, which is all Redis can count. */
	private void tell(KnownStates.Known owed, long permits) throws ScriptCaller.CallFailure {
		List<RedisLimiter> limiter = List.of(this.transitions.limiter(owed.policy.shared()));
		List<String> client = List.of(RedisKeys.escape(owed.key));
		long sent = this.calls.now();
		ScriptCaller.done(this.calls.carryOver(client, limiter, sent, true));
		// a state Redis lost is not told anything: the next decision of the key restores it first
		ScriptCaller.done(this.calls.charge(client.get(0), limiter.get(0), permits, sent,
				KnownStates.expected(List.of(owed), sent), true));
	}

}
