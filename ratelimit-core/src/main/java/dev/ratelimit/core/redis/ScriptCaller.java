package dev.ratelimit.core.redis;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;

/**
 * Sends one script call through the executor and waits for its reply at most the store's timeout, counted from
 * when it was sent; tells a failure's {@link Kind}. Every call it sends carries its deadline in Redis' time
 * when the {@link RedisClock} knows it, so that Redis never runs it after the caller gave up.
 */
final class ScriptCaller {

	/** The start of the error a script answers when it runs after its deadline. */
	private static final String LATE = "LATE ";

	private final RedisScriptExecutor executor;

	private final long timeoutNanos;

	private final RedisClock clock;

	ScriptCaller(RedisScriptExecutor executor, Duration timeout, RedisClock clock) {
		this.executor = executor;
		this.timeoutNanos = timeout.toNanos();
		this.clock = clock;
	}

	RedisClock clock() {
		return this.clock;
	}

	/**
	 * Calls the script and waits for its reply.
	 * @param args the script's arguments given the deadline argument ({@code ""} when unknown)
	 */
	List<Long> call(RedisScripts.Script script, List<String> keys, Function<String, List<String>> args)
			throws CallFailure {
		long sent = this.clock.nanoTime();
		CompletableFuture<List<Long>> reply = send(script, keys,
				args.apply(this.clock.redisTime(sent + this.timeoutNanos)));
		try {
			return reply.get(Math.max(0, sent + this.timeoutNanos - this.clock.nanoTime()), TimeUnit.NANOSECONDS);
		}
		catch (TimeoutException ex) {
			reply.cancel(true);
			throw new CallFailure(Kind.SLOW, new TimeoutException(
					"Redis did not answer within " + Duration.ofNanos(this.timeoutNanos).toMillis() + " ms"), sent);
		}
		catch (ExecutionException ex) {
			Throwable cause = (ex.getCause() != null) ? ex.getCause() : ex;
			throw new CallFailure(kind(cause), cause, sent);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			reply.cancel(true);
			throw new CallFailure(Kind.INTERRUPTED, ex, sent);
		}
	}

	/** Sends the call; an executor that throws instead of failing its stage fails the reply all the same. */
	CompletableFuture<List<Long>> send(RedisScripts.Script script, List<String> keys, List<String> args) {
		try {
			return this.executor.execute(script.sha1(), script.source(), keys, args).toCompletableFuture();
		}
		catch (RuntimeException ex) {
			return CompletableFuture.failedFuture(ex);
		}
	}

	private static Kind kind(Throwable failure) {
		for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
			if (cause instanceof ScriptNotSentException notSent) {
				return switch (notSent.reason()) {
					case UNREACHABLE -> Kind.UNREACHABLE;
					case CLIENT_BUSY -> Kind.CLIENT_BUSY;
				};
			}
			if (cause.getMessage() != null && cause.getMessage().startsWith(LATE)) {
				return Kind.SLOW;
			}
		}
		return Kind.ERROR;
	}

	/** Why Redis did not decide a call, and whether that is evidence against Redis. */
	enum Kind {

		/** Redis cannot be reached: the store switches to its failure policy at once. */
		UNREACHABLE(true),

		/** Redis did not answer within the timeout, or ran the call after its deadline. */
		SLOW(true),

		/** Redis answered with an error, or with a reply that is not the script's. */
		ERROR(true),

		/** This instance's client had no connection free: not Redis' fault. */
		CLIENT_BUSY(false),

		/** The caller's thread was interrupted: not Redis' fault. */
		INTERRUPTED(false);

		final boolean blamesRedis;

		Kind(boolean blamesRedis) {
			this.blamesRedis = blamesRedis;
		}

	}

	long timeoutNanos() {
		return this.timeoutNanos;
	}

	/** Redis did not decide a call sent at {@code sentNanos}. */
	static final class CallFailure extends Exception {

		private static final long serialVersionUID = 1L;

		final Kind kind;

		final long sentNanos;

		CallFailure(Kind kind, Throwable cause, long sentNanos) {
			super(cause);
			this.kind = kind;
			this.sentNanos = sentNanos;
		}

		@Override
		public synchronized Throwable getCause() {
			return java.util.Objects.requireNonNull(super.getCause());
		}

	}

}
