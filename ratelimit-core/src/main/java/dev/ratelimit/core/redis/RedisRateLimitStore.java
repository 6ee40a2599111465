package dev.ratelimit.core.redis;

import java.math.BigInteger;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;

import org.jspecify.annotations.Nullable;

import dev.ratelimit.core.Decision;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.RateLimitStore;
import dev.ratelimit.core.RateLimiter;
import dev.ratelimit.core.TimeSource;
import dev.ratelimit.core.memory.InMemoryRateLimitStore;

/**
 * A {@link RateLimitStore} that keeps every key's state in Redis, shared by every instance that uses the same
 * Redis and key prefix.
 * <p>
 * Each decision is exactly one Lua script call, atomic in Redis: one key per policy, or one call over the
 * keys of all policies for {@link #decideAll stacked limits}. The scripts make the same decisions as the
 * {@link InMemoryRateLimitStore}, with the same integer arithmetic. A client's keys are
 * {@code <prefix>{<client key>}:<policy name>}: the braces are a Redis Cluster hash tag, so that the keys of one
 * client live in one slot; {@code %}, <code>{</code> and <code>}</code> in a client key are written
 * {@code %25}, {@code %7B} and {@code %7D}, and the empty key as {@code %}. Every key expires once it is back to
 * its full quota.
 * <p>
 * Time comes from Redis' {@code TIME}, so that instances with skewed clocks agree, unless a
 * {@link Builder#timeSource(TimeSource) time source} is set. Times in decisions are whole nanoseconds, as the
 * in-memory store reports them.
 * <p>
 * When Redis fails or does not answer within the {@link Builder#timeout(Duration) timeout}, the
 * {@link FailurePolicy} decides instead. While Redis is failing, one decision at a time still goes to Redis
 * to find out whether it is back; the others take the failure policy at once instead of each waiting for the
 * timeout. Every such decision is reported to the {@link Builder#onFailure(FailureListener) failure listener}
 * and counted in a log line written at most every ten seconds.
 */
public final class RedisRateLimitStore implements RateLimitStore {

	/** The largest number a Lua number (a double) holds exactly. */
	private static final long MAX_EXACT = 1L << 53;

	/**
	 * How far into the future an instant in a key may lie, in microseconds: {@code TIME} (about 2^50.7 in 2026)
	 * plus this stays below 2^53 until the year 2255.
	 */
	private static final long MAX_HORIZON_MICROS = 1L << 52;

	private static final Duration MAX_DENY_RETRY = Duration.ofSeconds(1);

	/** The warm-up's client in its keys: {@link #escape} writes every {@code %} of a client key as {@code %25}. */
	private static final String WARM_UP_KEY = "%warm-up";

	private final RedisScriptExecutor executor;

	private final String keyPrefix;

	private final @Nullable TimeSource timeSource;

	private final long timeoutNanos;

	private final FailurePolicy failurePolicy;

	private final RateLimitStore fallback;

	private final FailureListener listener;

	private final FailureLog failureLog;

	private final ConcurrentHashMap<RateLimitPolicy, RedisLimiter> limiters = new ConcurrentHashMap<>();

	/** The last failure while Redis is failing, null while it answers. */
	private volatile @Nullable Throwable failing;

	/** Whether a decision is on its way to Redis to find out whether it answers again. */
	private final AtomicBoolean probing = new AtomicBoolean();

	private RedisRateLimitStore(Builder builder) {
		this.executor = builder.executor;
		this.keyPrefix = builder.keyPrefix;
		this.timeSource = builder.timeSource;
		this.timeoutNanos = builder.timeout.toNanos();
		this.failurePolicy = builder.failurePolicy;
		RateLimitStore fallback = builder.fallback;
		if (fallback == null) {
			InMemoryRateLimitStore.Builder local = InMemoryRateLimitStore.builder();
			if (builder.timeSource != null) {
				local.timeSource(builder.timeSource);
			}
			fallback = local.build();
		}
		this.fallback = fallback;
		this.listener = builder.listener;
		this.failureLog = new FailureLog(builder.failurePolicy);
	}

	/**
	 * Returns a builder of Redis stores.
	 * @param executor runs the scripts in Redis
	 * @return a builder with the key prefix {@code ratelimit:}, Redis' clock, a timeout of 100 ms and the
	 * {@link FailurePolicy#LOCAL LOCAL} failure policy
	 */
	public static Builder builder(RedisScriptExecutor executor) {
		return new Builder(executor);
	}

	@Override
	public RateLimiter limiter(RateLimitPolicy policy) {
		RedisLimiter limiter = this.limiters.get(policy);
		return (limiter != null) ? limiter : this.limiters.computeIfAbsent(
				Objects.requireNonNull(policy, "policy must not be null"), (p) -> new RedisLimiter(this, p));
	}

	@Override
	public List<Decision> decideAll(String key, List<RateLimitPolicy> policies) {
		if (policies.isEmpty()) {
			throw new IllegalArgumentException("At least one policy is needed to decide a request");
		}
		if (policies.size() == 1) {
			return List.of(limiter(policies.get(0)).decide(key));
		}
		return decide(key, limiters(policies));
	}

	/** The limiters of policies decided together, whose names tell their keys apart. */
	private List<RedisLimiter> limiters(List<RateLimitPolicy> policies) {
		Set<String> names = new HashSet<>();
		List<RedisLimiter> limiters = new ArrayList<>(policies.size());
		for (RateLimitPolicy policy : policies) {
			if (!names.add(policy.name())) {
				throw new IllegalArgumentException(
						"Stacked policies must have distinct names, '" + policy.name() + "' appears twice");
			}
			limiters.add((RedisLimiter) limiter(policy));
		}
		return limiters;
	}

	/** Decides one request under the given policies: one script call, or the failure policy. */
	List<Decision> decide(String key, List<RedisLimiter> limiters) {
		Throwable failing = this.failing;
		boolean probe = false;
		if (failing != null) {
			if (!this.probing.compareAndSet(false, true)) {
				return fallBack(key, limiters, failing);
			}
			probe = true;
		}
		try {
			List<Decision> decisions = callRedis(key, limiters);
			if (this.failing != null) {
				this.failing = null;
				this.failureLog.recovered();
			}
			return decisions;
		}
		catch (RedisFailure failure) {
			if (failure.redisAtFault) {
				this.failing = failure.getCause();
			}
			return fallBack(key, limiters, failure.getCause());
		}
		finally {
			if (probe) {
				this.probing.set(false);
			}
		}
	}

	/**
	 * Runs, once each, the scripts that the given policies use, on a key that no client key is written as, so
	 * that the connection is open and Redis has compiled the scripts before the first request: that request
	 * would otherwise pay for both, which can take longer than the timeout. The key it writes expires like any
	 * other, and no client's state changes. It neither calls the failure listener nor applies the failure
	 * policy.
	 * @param stacks the policies of each endpoint, decided together when there are several
	 * @return completes once Redis has run every script, exceptionally when one call failed
	 */
	public CompletableFuture<Void> warmUp(Collection<List<RateLimitPolicy>> stacks) {
		Map<String, CompletableFuture<List<Long>>> calls = new HashMap<>();
		for (List<RateLimitPolicy> stack : stacks) {
			Call call = call(WARM_UP_KEY, limiters(stack));
			calls.computeIfAbsent(call.script.sha1(), (sha1) -> send(call));
		}
		return CompletableFuture.allOf(calls.values().toArray(CompletableFuture[]::new));
	}

	/** One script call: the script, its keys and its arguments. */
	private record Call(RedisScripts.Script script, List<String> keys, List<String> args) {
	}

	/** The call deciding under the given policies for a client whose key is written {@code clientKey}. */
	private Call call(String clientKey, List<RedisLimiter> limiters) {
		String now = (this.timeSource != null) ? Long.toString(Math.floorDiv(this.timeSource.nanoTime(), 1000))
				: "";
		String keyStart = this.keyPrefix + '{' + clientKey + "}:";
		if (limiters.size() == 1) {
			RedisLimiter limiter = limiters.get(0);
			return new Call(limiter.script, List.of(keyStart + limiter.policy().name()), limiter.standaloneArgs(now));
		}
		List<String> keys = new ArrayList<>(limiters.size());
		List<String> args = new ArrayList<>(1 + 6 * limiters.size());
		args.add(now);
		for (RedisLimiter limiter : limiters) {
			keys.add(keyStart + limiter.policy().name());
			limiter.addStackedArgs(args);
		}
		return new Call(RedisScripts.get().stacked(), keys, args);
	}

	private List<Decision> callRedis(String key, List<RedisLimiter> limiters) throws RedisFailure {
		Call call = call(escape(key), limiters);
		List<Long> reply = await(call);
		try {
			if (reply.size() != 8 * limiters.size()) {
				throw new IllegalStateException("wrong length");
			}
			List<Decision> decisions = new ArrayList<>(limiters.size());
			for (int i = 0; i < limiters.size(); i++) {
				decisions.add(decision(limiters.get(i).policy(), reply, 8 * i));
			}
			return decisions;
		}
		catch (RuntimeException ex) {
			throw new RedisFailure(new IllegalStateException(
					"Expected " + 8 * limiters.size() + " integers from the rate limiting script, got " + reply, ex),
					true);
		}
	}

	/** Sends the call; an executor that throws instead of failing its stage fails the reply all the same. */
	private CompletableFuture<List<Long>> send(Call call) {
		try {
			return this.executor.execute(call.script.sha1(), call.script.source(), call.keys, call.args)
				.toCompletableFuture();
		}
		catch (RuntimeException ex) {
			return CompletableFuture.failedFuture(ex);
		}
	}

	private List<Long> await(Call call) throws RedisFailure {
		CompletableFuture<List<Long>> reply = send(call);
		try {
			return reply.get(this.timeoutNanos, TimeUnit.NANOSECONDS);
		}
		catch (TimeoutException ex) {
			reply.cancel(true);
			throw new RedisFailure(new TimeoutException(
					"Redis did not answer within " + Duration.ofNanos(this.timeoutNanos).toMillis() + " ms"), true);
		}
		catch (ExecutionException ex) {
			throw new RedisFailure((ex.getCause() != null) ? ex.getCause() : ex, true);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			reply.cancel(true);
			throw new RedisFailure(ex, false);
		}
	}

	/** Reads one policy's eight integers: microseconds rounded up, and the nanoseconds that rounding added. */
	private static Decision decision(RateLimitPolicy policy, List<Long> reply, int offset) {
		return new Decision(reply.get(offset) == 1, policy.limit(), reply.get(offset + 1),
				reply.get(offset + 2) * 1000 - reply.get(offset + 5), reply.get(offset + 3) * 1000 - reply.get(offset + 6),
				reply.get(offset + 4) * 1000 - reply.get(offset + 7));
	}

	private List<Decision> fallBack(String key, List<RedisLimiter> limiters, Throwable cause) {
		this.failureLog.failed(cause);
		List<RateLimitPolicy> policies = new ArrayList<>(limiters.size());
		for (RedisLimiter limiter : limiters) {
			policies.add(limiter.policy());
		}
		try {
			this.listener.onFailure(policies, cause);
		}
		catch (RuntimeException ex) {
			this.failureLog.listenerFailed(ex);
		}
		return switch (this.failurePolicy) {
			case ALLOW -> policies.stream()
				.map((policy) -> new Decision(true, policy.limit(), policy.capacity() - policy.cost(), 0, 0, 0))
				.toList();
			case DENY -> policies.stream().map((policy) -> {
				long retry = Math.min(policy.window().toNanos(), MAX_DENY_RETRY.toNanos());
				return new Decision(false, policy.limit(), 0, retry, policy.window().toNanos(), 0);
			}).toList();
			case LOCAL -> (policies.size() == 1) ? List.of(this.fallback.limiter(policies.get(0)).decide(key))
					: this.fallback.decideAll(key, policies);
		};
	}

	/**
	 * Writes a client key so that it cannot break the hash tag around it: {@code %}, <code>{</code> and
	 * <code>}</code> become {@code %25}, {@code %7B} and {@code %7D}, and the empty key {@code %}, which no other
	 * key becomes.
	 */
	static String escape(String key) {
		if (key.isEmpty()) {
			return "%";
		}
		int i = 0;
		while (i < key.length() && !needsEscape(key.charAt(i))) {
			i++;
		}
		if (i == key.length()) {
			return key;
		}
		StringBuilder escaped = new StringBuilder(key.length() + 8).append(key, 0, i);
		for (; i < key.length(); i++) {
			char c = key.charAt(i);
			switch (c) {
				case '%' -> escaped.append("%25");
				case '{' -> escaped.append("%7B");
				case '}' -> escaped.append("%7D");
				default -> escaped.append(c);
			}
		}
		return escaped.toString();
	}

	private static boolean needsEscape(char c) {
		return c == '%' || c == '{' || c == '}';
	}

	/**
	 * Rejects the few policies whose figures a Lua number could not hold exactly, naming what is too large.
	 */
	static void checkComputable(RateLimitPolicy policy) {
		boolean bucket = switch (policy.algorithm()) {
			case TOKEN_BUCKET, LEAKY_BUCKET, GCRA -> true;
			case FIXED_WINDOW, SLIDING_LOG, SLIDING_WINDOW_COUNTER -> false;
		};
		BigInteger limit = BigInteger.valueOf(policy.limit());
		BigInteger window = BigInteger.valueOf(policy.windowMicros());
		String problem = null;
		if (policy.windowMicros() > MAX_HORIZON_MICROS) {
			problem = "its window is longer than 2^52 microseconds (142 years)";
		}
		else if (policy.limit() > MAX_EXACT) {
			problem = "its limit is above 2^53";
		}
		else if (bucket && policy.limit() / limit.gcd(window).longValue() > MAX_EXACT / 1000) {
			// the ticks per microsecond, times 1000 when they are turned into nanoseconds
			problem = "window / limit needs more than 2^53 / 1000 ticks per microsecond";
		}
		else if (bucket && BigInteger.valueOf(policy.burst() + policy.cost())
			.multiply(window)
			.divide(limit)
			.compareTo(BigInteger.valueOf(MAX_HORIZON_MICROS)) > 0) {
			problem = "(burst + cost) x window / limit is longer than 2^52 microseconds (142 years)";
		}
		if (problem != null) {
			throw new IllegalArgumentException("policy '" + policy.name() + "' (" + policy.limit() + " per "
					+ policy.window() + ", " + policy.algorithm() + ") cannot be computed exactly in Redis: "
					+ problem);
		}
	}

	/**
	 * Told of every decision that the {@link FailurePolicy} made because Redis did not.
	 */
	@FunctionalInterface
	public interface FailureListener {

		/**
		 * Called once per decision made without Redis, on the thread that asked for it; must be quick and
		 * must not throw.
		 * @param policies the policies of the decision
		 * @param cause why Redis did not decide: a {@link TimeoutException}, the Redis client's exception, or
		 * the last such failure while Redis is known to be failing
		 */
		void onFailure(List<RateLimitPolicy> policies, Throwable cause);

	}

	/** Redis did not decide; {@code redisAtFault} is false when the caller's thread was interrupted. */
	private static final class RedisFailure extends Exception {

		private static final long serialVersionUID = 1L;

		final boolean redisAtFault;

		RedisFailure(Throwable cause, boolean redisAtFault) {
			super(cause);
			this.redisAtFault = redisAtFault;
		}

		@Override
		public synchronized Throwable getCause() {
			return Objects.requireNonNull(super.getCause());
		}

	}

	/**
	 * Builds a {@link RedisRateLimitStore}.
	 */
	public static final class Builder {

		private final RedisScriptExecutor executor;

		private String keyPrefix = "ratelimit:";

		private @Nullable TimeSource timeSource;

		private Duration timeout = Duration.ofMillis(100);

		private FailurePolicy failurePolicy = FailurePolicy.LOCAL;

		private @Nullable RateLimitStore fallback;

		private FailureListener listener = (policies, cause) -> {
		};

		private Builder(RedisScriptExecutor executor) {
			this.executor = Objects.requireNonNull(executor, "executor must not be null");
		}

		/**
		 * Sets the prefix of every key the store writes; instances that share a prefix (and a Redis) share
		 * their quotas.
		 * @param keyPrefix the prefix, without braces
		 * @return this builder
		 */
		public Builder keyPrefix(String keyPrefix) {
			Objects.requireNonNull(keyPrefix, "keyPrefix must not be null");
			if (keyPrefix.indexOf('{') >= 0 || keyPrefix.indexOf('}') >= 0) {
				throw new IllegalArgumentException(
						"keyPrefix '" + keyPrefix + "' must not contain braces: they would move the hash tag");
			}
			this.keyPrefix = keyPrefix;
			return this;
		}

		/**
		 * Makes the store read the time from {@code timeSource} and pass it to Redis, instead of using Redis'
		 * own clock. Every instance sharing the keys must then use the same clock: this is meant for tests and
		 * for replaying recorded traffic.
		 * @param timeSource the time source; its value in microseconds is the scripts' {@code now}
		 * @return this builder
		 */
		public Builder timeSource(TimeSource timeSource) {
			this.timeSource = Objects.requireNonNull(timeSource, "timeSource must not be null");
			return this;
		}

		/**
		 * Sets how long a decision waits for Redis before the failure policy decides instead.
		 * @param timeout the timeout, positive
		 * @return this builder
		 */
		public Builder timeout(Duration timeout) {
			Objects.requireNonNull(timeout, "timeout must not be null");
			if (timeout.isNegative() || timeout.isZero()) {
				throw new IllegalArgumentException("timeout must be positive, was " + timeout);
			}
			this.timeout = timeout;
			return this;
		}

		/**
		 * Sets what is decided when Redis does not decide.
		 * @param failurePolicy the failure policy
		 * @return this builder
		 */
		public Builder failurePolicy(FailurePolicy failurePolicy) {
			this.failurePolicy = Objects.requireNonNull(failurePolicy, "failurePolicy must not be null");
			return this;
		}

		/**
		 * Sets the store that decides under {@link FailurePolicy#LOCAL}; by default an
		 * {@link InMemoryRateLimitStore} with the same time source.
		 * @param fallback the local store
		 * @return this builder
		 */
		public Builder fallback(RateLimitStore fallback) {
			this.fallback = Objects.requireNonNull(fallback, "fallback must not be null");
			return this;
		}

		/**
		 * Sets who is told of every decision made without Redis, for instance to count them.
		 * @param listener the listener
		 * @return this builder
		 */
		public Builder onFailure(FailureListener listener) {
			this.listener = Objects.requireNonNull(listener, "listener must not be null");
			return this;
		}

		/**
		 * Builds the store. Nothing is sent to Redis until the first decision.
		 * @return the store
		 */
		public RedisRateLimitStore build() {
			return new RedisRateLimitStore(this);
		}

	}

}
