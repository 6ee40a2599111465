package dev.ratelimit.core.redis;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.StringJoiner;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.LongSupplier;

import org.jspecify.annotations.Nullable;

import dev.ratelimit.core.Decision;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.TimeSource;
import dev.ratelimit.core.internal.FailureKind;
import dev.ratelimit.core.internal.PolicyLimiters.Predecessor;

/**
 * Writes the script call that decides one request under one or several policies, following the calling
 * convention of {@code docs/redis.md}, and reads its reply into decisions.
 */
final class DecisionCalls {

	/** The integers a script replies per policy. */
	private static final int REPLY = 9;

	/** Where a chain of calls starts, and what a chain of none is. */
	static final CompletableFuture<Void> DONE = CompletableFuture.completedFuture(null);

	private final RedisKeys keys;

	private final @Nullable TimeSource timeSource;

	private final ScriptCaller caller;

	private final LongSupplier now;

	DecisionCalls(RedisKeys keys, @Nullable TimeSource timeSource, ScriptCaller caller) {
		this.keys = keys;
		this.timeSource = timeSource;
		this.caller = caller;
		this.now = clock(timeSource, caller.clock());
	}

	/** How long a caller waits for a call at most. */
	long maxWaitNanos() {
		return this.caller.maxWaitNanos();
	}

	/**
	 * Waits at most {@code nanos} for a stage that another caller completes, so that a caller that waits may
	 * chain it: a stage still under way afterwards, or failed, is left to fail the chain.
	 */
	static void await(CompletableFuture<?> stage, long nanos) {
		try {
			stage.get(nanos, TimeUnit.NANOSECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		catch (ExecutionException | TimeoutException ex) {
			// the chain reads it
		}
	}

	/**
	 * The script deciding under the given policies: the algorithm's own, or the stacked one, which alone applies
	 * penalties.
	 */
	RedisScripts.Script script(List<RedisLimiter> limiters) {
		return (penalties(limiters) == null && limiters.size() == 1) ? limiters.get(0).script
				: RedisScripts.get().stacked();
	}

	/**
	 * The stacked script's penalties of the given policies, or null when none has one: read on every decision,
	 * which allocates nothing unless a policy has a penalty.
	 */
	private static @Nullable String penalties(List<RedisLimiter> limiters) {
		for (RedisLimiter limiter : limiters) {
			if (!limiter.penalty.equals("0")) {
				StringJoiner penalties = new StringJoiner(",");
				limiters.forEach((each) -> penalties.add(each.penalty));
				return penalties.toString();
			}
		}
		return null;
	}

	/** The instant of a call sent now, in nanoseconds, on the {@link #clock clock} of calls. */
	long now() {
		return this.now.getAsLong();
	}

	/**
	 * The clock of calls, in nanoseconds: the time source's in whole microseconds, as the script reads it, or
	 * else the local clock's, which Redis' {@code TIME}, read once the call arrives, can only pass.
	 */
	static LongSupplier clock(@Nullable TimeSource timeSource, RedisClock clock) {
		return (timeSource != null) ? () -> Math.floorDiv(timeSource.nanoTime(), 1000) * 1000 : clock::nanoTime;
	}

	/**
	 * Decides one request under limits whose client keys are {@code clients}, already escaped, one per
	 * limiter: one script call, waited for at most the timeout if {@code wait}; the stage fails with a
	 * {@link ScriptCaller.CallFailure} when Redis did not decide.
	 * @param sent the instant of the call, from {@link #now()}
	 * @param peek whether to take nothing and reply as to a request another limit refused
	 */
	CompletableFuture<List<Decision>> decide(List<String> clients, List<RedisLimiter> limiters, long sent,
			boolean peek, boolean wait) {
		return decide(clients, limiters, sent, peek, "", wait);
	}

	/**
	 * Decides as {@link #decide(List, List, long, boolean, boolean)} does, unless Redis has lost a state that
	 * the caller expects it to hold: {@code expect}, as {@link KnownStates#expected} writes it, and the stage then
	 * fails with a {@link ScriptCaller.CallFailure} of kind {@link FailureKind#LOST}, Redis having taken
	 * nothing.
	 */
	CompletableFuture<List<Decision>> decide(List<String> clients, List<RedisLimiter> limiters, long sent,
			boolean peek, String expect, boolean wait) {
		return decisions(clients, limiters, this.caller.call(decideScript(limiters, peek), keys(clients, limiters),
				decideArgs(limiters, sent, peek, expect), wait));
	}

	/**
	 * Decides as {@link #decide(List, List, long, boolean, String, boolean)} does, and hands the decisions to
	 * {@code reader} as soon as the reply arrives, on the thread that receives it: a client that answers in
	 * order has then read every earlier reply before a later one reaches its caller.
	 */
	CompletableFuture<List<Decision>> decide(List<String> clients, List<RedisLimiter> limiters, long sent,
			boolean peek, String expect, boolean wait, Consumer<List<Decision>> reader) {
		return decisions(clients, limiters, this.caller.call(decideScript(limiters, peek), keys(clients, limiters),
				decideArgs(limiters, sent, peek, expect), wait, (reply) -> {
					try {
						reader.accept(read(clients, limiters, reply));
					}
					catch (ScriptCaller.CallFailure failure) {
						// the caller reads the same failure
					}
				}));
	}

	/** The decisions in the replies of a decision call, or the failure of a reply of another shape. */
	private CompletableFuture<List<Decision>> decisions(List<String> clients, List<RedisLimiter> limiters,
			CompletableFuture<List<Long>> replies) {
		return replies.thenApply((reply) -> {
			try {
				return read(clients, limiters, reply);
			}
			catch (ScriptCaller.CallFailure failure) {
				throw new CompletionException(failure);
			}
		});
	}

	private RedisScripts.Script decideScript(List<RedisLimiter> limiters, boolean peek) {
		return peek ? RedisScripts.get().stacked() : script(limiters);
	}

	private Function<String, List<String>> decideArgs(List<RedisLimiter> limiters, long sent, boolean peek,
			String expect) {
		String now = nowArgument(sent);
		return (deadline) -> peek ? peekArgs(limiters, now, deadline) : args(limiters, now, deadline, expect);
	}

	/** The decisions in a decision call's reply, one per limiter; a reply of another shape is a failure. */
	private List<Decision> read(List<String> clients, List<RedisLimiter> limiters, List<Long> reply)
			throws ScriptCaller.CallFailure {
		try {
			if (reply.size() != REPLY * limiters.size()) {
				throw new IllegalStateException("wrong length");
			}
			List<Decision> decisions = new ArrayList<>(limiters.size());
			for (int i = 0; i < limiters.size(); i++) {
				decisions.add(decision(limiters.get(i).policy(), reply, REPLY * i));
			}
			return decisions;
		}
		catch (RuntimeException ex) {
			throw new ScriptCaller.CallFailure(FailureKind.ERROR, new IllegalStateException("Expected "
					+ REPLY * limiters.size() + " integers from the rate limiting script, got " + reply, ex),
					this.caller.clock().nanoTime(), partition(clients.get(0)));
		}
	}

	/** The part of the key space that the calls for the client whose key is written {@code client} go to. */
	int partition(String client) {
		return this.caller.partition(List.of(this.keys.client(client)));
	}

	/**
	 * Takes {@code permits} that the failure policy admitted without Redis from the client whose key is written
	 * {@code client}, already escaped, under {@code limiter}'s policy, or what is left if fewer: Redis then counts
	 * them as if it had admitted them. One call, and one more when fewer are left.
	 * @param sent the instant of the call, from {@link #now()}
	 * @param expect whether the caller expects Redis to hold the state, as {@link KnownStates#expected} writes it
	 */
	CompletableFuture<Void> charge(String client, RedisLimiter limiter, long permits, long sent, String expect,
			boolean wait) {
		List<String> clients = List.of(client);
		return decide(clients, List.of(limiter.withCost(permits)), sent, false, expect, wait).thenCompose((taken) -> {
			Decision decision = taken.get(0);
			return (decision.allowed() || decision.remaining() == 0) ? DONE
					: decide(clients, List.of(limiter.withCost(decision.remaining())), sent, false, wait)
						.thenApply((rest) -> null);
		});
	}

	/**
	 * Takes from the state of the client whose key is written {@code client}, already escaped, under
	 * {@code limiter}'s policy, which Redis had lost, what it has left beyond the {@code remaining} permits Redis
	 * last said were: one call of the stacked script, waited for at most the timeout if {@code wait}. Restoring
	 * the same state again, from this instance or another, takes only what the one knowing fewer permits left
	 * knew more.
	 * @param sent the instant of the call, from {@link #now()}
	 */
	CompletableFuture<List<Long>> restore(String client, RedisLimiter limiter, long remaining, long sent,
			boolean wait) {
		String now = nowArgument(sent);
		return this.caller.call(RedisScripts.get().stacked(), keys(List.of(client), List.of(limiter)), (deadline) -> {
			List<String> args = new ArrayList<>(9);
			args.add(now);
			limiter.addRestoreArgs(args, remaining);
			Collections.addAll(args, deadline, "restore", "",
					Long.toString(TimeUnit.NANOSECONDS.toMillis(KnownStates.RESTORED_NANOS)));
			return args;
		}, wait);
	}

	/**
	 * Gives back what the allowed {@code decisions} took under limits whose client keys are {@code clients},
	 * already escaped: one script call, waited for at most the timeout if {@code wait}.
	 */
	CompletableFuture<List<Long>> giveBack(List<String> clients, List<RedisLimiter> limiters,
			List<Decision> decisions, boolean wait) {
		String now = nowArgument(now());
		return this.caller.call(RedisScripts.get().giveBack(), keys(clients, limiters), (deadline) -> {
			List<String> args = new ArrayList<>(2 + 6 * limiters.size());
			args.add(now);
			for (int i = 0; i < limiters.size(); i++) {
				limiters.get(i).addGiveBackArgs(args, decisions.get(i).takenAt());
			}
			if (!deadline.isEmpty()) {
				args.add(deadline);
			}
			return args;
		}, wait);
	}

	/**
	 * Sends, without waiting, one call of each script that the given stacks of limiters use, for the warm-up's
	 * client, whose key no client key is written as.
	 */
	CompletableFuture<Void> warmUp(List<List<RedisLimiter>> stacks) {
		Map<String, CompletableFuture<?>> calls = new HashMap<>();
		for (List<RedisLimiter> limiters : stacks) {
			calls.computeIfAbsent(script(limiters).sha1(), (sha1) -> this.caller.send(script(limiters),
					keys(Collections.nCopies(limiters.size(), RedisKeys.WARM_UP_CLIENT), limiters),
					args(limiters, nowArgument(now()), "", "")));
		}
		return CompletableFuture.allOf(calls.values().toArray(CompletableFuture[]::new));
	}

	/** The instant of a call sent now, as the scripts' now argument: empty for Redis' own {@code TIME}. */
	String stamp() {
		return nowArgument(now());
	}

	private String nowArgument(long now) {
		return (this.timeSource != null) ? Long.toString(now / 1000) : "";
	}

	private List<String> keys(List<String> clients, List<RedisLimiter> limiters) {
		if (limiters.size() == 1) {
			return List.of(this.keys.state(clients.get(0), limiters.get(0).stateName));
		}
		List<String> keys = new ArrayList<>(limiters.size());
		for (int i = 0; i < limiters.size(); i++) {
			keys.add(this.keys.state(clients.get(i), limiters.get(i).stateName));
		}
		return keys;
	}

	/**
	 * Carries each client's permits over to its limiter's policy from the ones it changed from, while any of
	 * them still counts: one more call per such limiter, one after another, until then; none afterwards. Each
	 * call is waited for if {@code wait}.
	 * @param clients the client keys, already escaped, one per limiter
	 * @param sent the instant of the decision that follows, from {@link #now()}
	 */
	CompletableFuture<?> carryOver(List<String> clients, List<RedisLimiter> limiters, long sent, boolean wait) {
		CompletableFuture<?> carried = DONE;
		for (int i = 0; i < limiters.size(); i++) {
			RedisLimiter limiter = limiters.get(i);
			List<Predecessor<RedisLimiter>> predecessors = limiter.predecessors;
			if (predecessors.isEmpty()) {
				continue;
			}
			List<Predecessor<RedisLimiter>> live = new ArrayList<>(predecessors.size());
			for (Predecessor<RedisLimiter> predecessor : predecessors) {
				if (predecessor.untilNanos() - sent > 0) {
					live.add(predecessor);
				}
			}
			if (!live.isEmpty()) {
				String client = clients.get(i);
				carried = carried.thenCompose((none) -> carryOver(client, limiter, live, sent, wait));
			}
		}
		return carried;
	}

	/**
	 * Carries the permits that the client whose key is written {@code client} has in use under the newest of
	 * {@code predecessors} holding it over to {@code limiter}, unless it has a state under it already: one
	 * script call, waited for at most the timeout if {@code wait}.
	 * @param sent the instant of the decision that follows, from {@link #now()}
	 */
	private CompletableFuture<List<Long>> carryOver(String client, RedisLimiter limiter,
			List<Predecessor<RedisLimiter>> predecessors, long sent, boolean wait) {
		List<String> keys = keys(client, limiter, predecessors);
		String now = nowArgument(sent);
		return this.caller.call(RedisScripts.get().carryOver(), keys, (deadline) -> {
			List<String> args = new ArrayList<>(2 + 6 * keys.size());
			args.add(now);
			limiter.addCarryOverArgs(args);
			for (Predecessor<RedisLimiter> predecessor : predecessors) {
				predecessor.limiter().addCarryOverArgs(args);
			}
			if (!deadline.isEmpty()) {
				args.add(deadline);
			}
			return args;
		}, wait);
	}

	/**
	 * Deletes the client's states under {@code limiter}'s policy and every policy it changed from: one script
	 * call, waited for at most the timeout.
	 */
	void reset(String client, RedisLimiter limiter) throws ScriptCaller.CallFailure {
		this.caller.call(RedisScripts.get().reset(), keys(client, limiter, limiter.predecessors),
				(deadline) -> List.of());
	}

	/** The client's state keys under the limiter's policy, then under each of {@code predecessors}. */
	private List<String> keys(String client, RedisLimiter limiter, List<Predecessor<RedisLimiter>> predecessors) {
		List<String> keys = new ArrayList<>(1 + predecessors.size());
		keys.add(this.keys.state(client, limiter.stateName));
		for (Predecessor<RedisLimiter> predecessor : predecessors) {
			keys.add(this.keys.state(client, predecessor.limiter().stateName));
		}
		return keys;
	}

	/** The stacked script's arguments, with the deadline always in its place and "peek" after it. */
	private static List<String> peekArgs(List<RedisLimiter> limiters, String now, String deadline) {
		List<String> args = new ArrayList<>(3 + 6 * limiters.size());
		args.add(now);
		for (RedisLimiter limiter : limiters) {
			limiter.addStackedArgs(args);
		}
		args.add(deadline);
		args.add("peek");
		String penalties = penalties(limiters);
		if (penalties != null) {
			Collections.addAll(args, "", "", penalties);
		}
		return args;
	}

	private static List<String> args(List<RedisLimiter> limiters, String now, String deadline, String expect) {
		String penalties = penalties(limiters);
		if (penalties == null && limiters.size() == 1) {
			return limiters.get(0).standaloneArgs(now, deadline, expect);
		}
		List<String> args = new ArrayList<>(6 + 6 * limiters.size());
		args.add(now);
		for (RedisLimiter limiter : limiters) {
			limiter.addStackedArgs(args);
		}
		if (penalties != null) {
			Collections.addAll(args, deadline, "", expect, "", penalties);
		}
		else if (!expect.isEmpty()) {
			Collections.addAll(args, deadline, "", expect);
		}
		else if (!deadline.isEmpty()) {
			args.add(deadline);
		}
		return args;
	}

	/**
	 * Reads one policy's nine integers: microseconds rounded up, the nanoseconds that rounding added, and the
	 * instant of the decision.
	 */
	private static Decision decision(RateLimitPolicy policy, List<Long> reply, int offset) {
		boolean allowed = reply.get(offset) == 1;
		return new Decision(allowed, policy.limit(), reply.get(offset + 1),
				reply.get(offset + 2) * 1000 - reply.get(offset + 5), reply.get(offset + 3) * 1000 - reply.get(offset + 6),
				reply.get(offset + 4) * 1000 - reply.get(offset + 7), allowed ? reply.get(offset + 8) : Decision.NOT_TAKEN);
	}

}
