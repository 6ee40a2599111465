package dev.ratelimit.core.redis;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.ToIntFunction;

import org.jspecify.annotations.Nullable;

import dev.ratelimit.core.internal.FailureKind;

/**
 * Sends one script call through the executor and waits for its reply at most the store's maximum wait, counted
 * from when it was sent, or hands the reply on without waiting, given up on after the same wait; tells a
 * failure's {@link FailureKind} the same way for both. A call still unanswered once the store's timeout has passed is
 * reported {@link Listener#late late} at that instant, as evidence of an outage, and still waited for: a reply
 * that comes before the maximum wait decides its request. A reply within the timeout is reported
 * {@link Listener#answered answered}, evidence that Redis is well; a later one is neither. Every call it sends
 * carries its deadline, the end of the maximum wait, in Redis' time when the {@link RedisClock} knows it, so that
 * Redis never runs it after the caller gave up.
 */
final class ScriptCaller {

	/** How long a request waits for its reply unless told, or the timeout if longer. */
	private static final Duration DEFAULT_MAX_WAIT = Duration.ofMillis(500);

	/** The start of the error a script answers when it runs after its deadline. */
	private static final String LATE = "LATE ";

	private static final String LOST = "LOST ";

	/** The start of the error a Cluster answers while a call's keys are being moved between nodes. */
	private static final String TRY_AGAIN = "TRYAGAIN";

	/** How long a call that a Cluster answered {@code TRYAGAIN} waits before it is sent again. */
	static final long TRY_AGAIN_NANOS = TimeUnit.MILLISECONDS.toNanos(10);

	private static final Consumer<List<Long>> NO_READER = (reply) -> {
	};

	private final RedisScriptExecutor executor;

	private final long timeoutNanos;

	private final long maxWaitNanos;

	private final RedisClock clock;

	private final Timer timer;

	private final Listener listener;

	private final ToIntFunction<String> partitions;

	/**
	 * Creates a caller that tells {@code listener} of a call answered within {@code timeout} or not, and gives up
	 * on it after {@code maxWait}, no shorter than the timeout.
	 */
	ScriptCaller(RedisScriptExecutor executor, Duration timeout, Duration maxWait, RedisClock clock, Timer timer,
			Listener listener, ToIntFunction<String> partitions) {
		this.executor = executor;
		this.partitions = partitions;
		this.timeoutNanos = timeout.toNanos();
		this.maxWaitNanos = Math.max(this.timeoutNanos, maxWait.toNanos());
		this.clock = clock;
		this.timer = timer;
		this.listener = listener;
	}

	RedisClock clock() {
		return this.clock;
	}

	/**
	 * The part of the key space that a call of {@code keys} goes to, whose failures count towards its outage
	 * alone: on a Cluster the slot of the keys, which all share one, else 0.
	 */
	int partition(List<String> keys) {
		return keys.isEmpty() ? 0 : this.partitions.applyAsInt(keys.get(0));
	}

	/**
	 * Calls the script and waits for its reply.
	 * @param args the script's arguments given the deadline argument ({@code ""} when unknown)
	 */
	List<Long> call(RedisScripts.Script script, List<String> keys, Function<String, List<String>> args)
			throws CallFailure {
		return call(script, keys, args, NO_READER);
	}

	private List<Long> call(RedisScripts.Script script, List<String> keys, Function<String, List<String>> args,
			Consumer<List<Long>> reader) throws CallFailure {
		long sent = this.clock.nanoTime();
		int partition = partition(keys);
		CompletableFuture<List<Long>> reply = send(script, keys, args.apply(deadline(sent)));
		reply.thenAccept(reader);
		try {
			List<Long> values;
			try {
				values = reply.get(remainingNanos(sent, this.timeoutNanos), TimeUnit.NANOSECONDS);
			}
			catch (TimeoutException ex) {
				this.listener.late(late(sent, partition));
				return reply.get(remainingNanos(sent, this.maxWaitNanos), TimeUnit.NANOSECONDS);
			}
			this.listener.answered(partition);
			return values;
		}
		catch (TimeoutException ex) {
			reply.cancel(true);
			throw timedOut(sent, partition);
		}
		catch (ExecutionException | CancellationException ex) {
			throw failed(ex, sent, partition);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			reply.cancel(true);
			throw new CallFailure(FailureKind.INTERRUPTED, ex, sent, partition);
		}
	}

	/**
	 * Calls the script without waiting for its reply: the stage completes with the reply, or with a
	 * {@link CallFailure} exactly as {@link #call} would throw it, on the thread that completes the executor's
	 * stage, or, once the maximum wait has passed, on the JDK's timer thread, which cancels the executor's stage
	 * as {@link #call} does. The same timer reports the call late once the timeout has passed.
	 * @param args the script's arguments given the deadline argument ({@code ""} when unknown)
	 */
	CompletableFuture<List<Long>> callAsync(RedisScripts.Script script, List<String> keys,
			Function<String, List<String>> args) {
		return callAsync(script, keys, args, NO_READER);
	}

	private CompletableFuture<List<Long>> callAsync(RedisScripts.Script script, List<String> keys,
			Function<String, List<String>> args, Consumer<List<Long>> reader) {
		long sent = this.clock.nanoTime();
		int partition = partition(keys);
		CompletableFuture<List<Long>> reply = send(script, keys, args.apply(deadline(sent)));
		reply.thenAccept(reader);
		CompletableFuture<List<Long>> answer = new CompletableFuture<>();
		// whether the reply came within the timeout or the call was reported late: whichever came first, once
		AtomicBoolean reported = new AtomicBoolean();
		reply.whenComplete((values, ex) -> {
			if (ex == null) {
				if (reported.compareAndSet(false, true)) {
					this.listener.answered(partition);
				}
				answer.complete(values);
			}
			// a stage cancelled by the timeout below is answered there, as a late reply, not as an error
			else if (!reply.isCancelled()) {
				answer.completeExceptionally(failed(ex, sent, partition));
			}
		});
		if (!answer.isDone()) {
			// left to expire once answered: cancelling it would take the timer's lock on the answering thread
			this.timer.schedule(() -> {
				if (answer.isDone() || !reported.compareAndSet(false, true)) {
					return;
				}
				this.listener.late(late(sent, partition));
				this.timer.schedule(() -> {
					// a reply that came first answers, as it has taken its permits; a stage cancelled elsewhere
					// does not
					if (!answer.isDone() && (reply.cancel(true) || reply.isCancelled())) {
						answer.completeExceptionally(timedOut(sent, partition));
					}
				}, remainingNanos(sent, this.maxWaitNanos));
			}, remainingNanos(sent, this.timeoutNanos));
		}
		return answer;
	}

	/**
	 * Waits for or runs the call as {@code wait} says, so that one sequence of calls can be written once for a
	 * caller that waits and for one that must not: waiting, the stage is complete when returned.
	 */
	CompletableFuture<List<Long>> call(RedisScripts.Script script, List<String> keys,
			Function<String, List<String>> args, boolean wait) {
		return call(script, keys, args, wait, NO_READER);
	}

	/**
	 * Calls as {@link #call(RedisScripts.Script, List, Function, boolean)} does, and hands the reply to
	 * {@code reader} on the thread that receives it, as soon as it does: with a client that answers in order,
	 * before the reply to any call sent later reaches its caller.
	 */
	CompletableFuture<List<Long>> call(RedisScripts.Script script, List<String> keys,
			Function<String, List<String>> args, boolean wait, Consumer<List<Long>> reader) {
		if (!wait) {
			return callAsync(script, keys, args, reader);
		}
		try {
			return CompletableFuture.completedFuture(call(script, keys, args, reader));
		}
		catch (CallFailure failure) {
			return CompletableFuture.failedFuture(failure);
		}
	}

	/**
	 * The call failure that completed a stage of calls exceptionally: its {@link CallFailure}; anything else, a
	 * listener's error or a bug, is thrown on to whoever waits for the stage.
	 */
	static CallFailure failure(Throwable ex) {
		Throwable cause = (ex instanceof CompletionException && ex.getCause() != null) ? ex.getCause() : ex;
		if (cause instanceof CallFailure failure) {
			return failure;
		}
		throw (ex instanceof CompletionException completion) ? completion : new CompletionException(cause);
	}

	/**
	 * The value of a stage complete at once, as when every call in it was {@code wait}ed for, with a
	 * {@link CallFailure} thrown as such and anything else thrown as it was.
	 */
	static <T> T done(CompletableFuture<T> stage) throws CallFailure {
		if (!stage.isDone()) {
			// joining would hand the caller's thread over to whichever thread completes the stage
			throw new IllegalStateException("A stage of calls that were waited for is still under way");
		}
		try {
			return stage.join();
		}
		catch (CompletionException ex) {
			Throwable cause = (ex.getCause() != null) ? ex.getCause() : ex;
			if (cause instanceof CallFailure failure) {
				throw failure;
			}
			if (cause instanceof RuntimeException runtime) {
				throw runtime;
			}
			if (cause instanceof Error error) {
				throw error;
			}
			throw ex;
		}
	}

	/**
	 * The value of a stage complete at once whose calls' failures have all been dealt with, with anything it
	 * failed with thrown as it was.
	 */
	static <T> T settled(CompletableFuture<T> stage) {
		try {
			return done(stage);
		}
		catch (CallFailure failure) {
			throw new IllegalStateException("A call failure was not dealt with", failure);
		}
	}

	/**
	 * The maximum wait of a store with {@code timeout}: {@code maxWait}, which must be no shorter, or by default
	 * 500 ms, or the timeout if longer.
	 * @throws IllegalArgumentException if {@code maxWait} is shorter than the timeout
	 */
	static Duration maxWait(Duration timeout, @Nullable Duration maxWait) {
		if (maxWait == null) {
			return (timeout.compareTo(DEFAULT_MAX_WAIT) > 0) ? timeout : DEFAULT_MAX_WAIT;
		}
		if (maxWait.compareTo(timeout) < 0) {
			throw new IllegalArgumentException(
					"maxWait must be no shorter than the timeout (" + timeout + "), was " + maxWait);
		}
		return maxWait;
	}

	private String deadline(long sent) {
		return this.clock.redisTime(sent + this.maxWaitNanos);
	}

	private long remainingNanos(long sent, long waitNanos) {
		return Math.max(0, sent + waitNanos - this.clock.nanoTime());
	}

	/** A call that Redis has not answered within the timeout, reported once while it is still waited for. */
	private CallFailure late(long sent, int partition) {
		return new CallFailure(FailureKind.SLOW, new TimeoutException(
				"Redis did not answer within " + Duration.ofNanos(this.timeoutNanos).toMillis() + " ms"), sent,
				partition);
	}

	/** A call given up on: reported late already, so that it counts once towards an outage. */
	private CallFailure timedOut(long sent, int partition) {
		return new CallFailure(FailureKind.SLOW, new TimeoutException(
				"Redis did not answer within " + Duration.ofNanos(this.maxWaitNanos).toMillis() + " ms"), sent,
				true, partition);
	}

	/** What the executor's stage failed with, read as {@link CompletableFuture#get()} reports it. */
	private static CallFailure failed(Throwable ex, long sent, int partition) {
		Throwable cause = ((ex instanceof ExecutionException || ex instanceof CompletionException)
				&& ex.getCause() != null) ? ex.getCause() : ex;
		return new CallFailure(kind(cause), cause, sent, partition);
	}

	/**
	 * Sends the call, and sends it again while a Cluster answers {@code TRYAGAIN} (its keys are being moved to
	 * another node, some there already), {@link #TRY_AGAIN_NANOS} later each time, while the maximum wait allows:
	 * a slot migration is no outage. Cancelling the reply cancels the call under way. An executor that throws
	 * instead of failing its stage fails the reply all the same.
	 */
	CompletableFuture<List<Long>> send(RedisScripts.Script script, List<String> keys, List<String> args) {
		CompletableFuture<List<Long>> reply = new CompletableFuture<>();
		sendUntilAnswered(script, keys, args, this.clock.nanoTime(), reply);
		return reply;
	}

	private void sendUntilAnswered(RedisScripts.Script script, List<String> keys, List<String> args, long first,
			CompletableFuture<List<Long>> reply) {
		CompletableFuture<List<Long>> sent = sendOnce(script, keys, args);
		reply.whenComplete((values, ex) -> {
			if (reply.isCancelled()) {
				sent.cancel(true);
			}
		});
		sent.whenComplete((values, ex) -> {
			if (ex == null) {
				reply.complete(values);
			}
			else if (tryAgain(ex) && !reply.isDone()
					&& this.clock.nanoTime() + TRY_AGAIN_NANOS - first < this.maxWaitNanos) {
				this.timer.schedule(() -> {
					if (!reply.isDone()) {
						sendUntilAnswered(script, keys, args, first, reply);
					}
				}, TRY_AGAIN_NANOS);
			}
			else {
				reply.completeExceptionally(ex);
			}
		});
	}

	private CompletableFuture<List<Long>> sendOnce(RedisScripts.Script script, List<String> keys, List<String> args) {
		try {
			return this.executor.execute(script.sha1(), script.source(), keys, args).toCompletableFuture();
		}
		catch (RuntimeException ex) {
			return CompletableFuture.failedFuture(ex);
		}
	}

	/** Whether a Cluster answered that the call's keys are being moved and the call is to be sent again. */
	private static boolean tryAgain(Throwable failure) {
		for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
			if (answered(cause, TRY_AGAIN)) {
				return true;
			}
		}
		return false;
	}

	private static FailureKind kind(Throwable failure) {
		for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
			if (cause instanceof ScriptNotSentException notSent) {
				return switch (notSent.reason()) {
					case UNREACHABLE -> FailureKind.UNREACHABLE;
					case CLIENT_BUSY -> FailureKind.CLIENT_BUSY;
				};
			}
			if (late(cause)) {
				return FailureKind.SLOW;
			}
			if (answered(cause, LOST)) {
				return FailureKind.LOST;
			}
		}
		return FailureKind.ERROR;
	}

	/** Whether Redis answered that it ran the call after its deadline, taking nothing. */
	private static boolean late(Throwable failure) {
		return answered(failure, LATE);
	}

	/** Whether {@code failure} is Redis' error reply that starts with {@code error}, as a client reports it. */
	private static boolean answered(Throwable failure, String error) {
		return failure.getMessage() != null && failure.getMessage().startsWith(error);
	}

	/** Runs a task once a delay has passed, without making the scheduling thread wait. */
	@FunctionalInterface
	interface Timer {

		/**
		 * The JDK's {@link CompletableFuture} timer thread, shared by the JVM, which runs the task itself: a
		 * daemon that only ever completes stages, started at its first use.
		 */
		Timer JDK = (task, delayNanos) -> CompletableFuture
			.delayedExecutor(delayNanos, TimeUnit.NANOSECONDS, Runnable::run)
			.execute(task);

		void schedule(Runnable task, long delayNanos);

	}

	long maxWaitNanos() {
		return this.maxWaitNanos;
	}

	/** Told whether Redis answers each call within the timeout. */
	interface Listener {

		/** Redis answered a call to {@code partition} of the key space within the timeout. */
		void answered(int partition);

		/** Redis has not answered a call within the timeout; the caller still waits for it. */
		void late(CallFailure failure);

	}

	/** Redis did not decide a call sent at {@code sentNanos}. */
	static final class CallFailure extends Exception {

		private static final long serialVersionUID = 1L;

		final FailureKind kind;

		final long sentNanos;

		/** Whether the call was reported late already, so that its failure counts no more towards an outage. */
		final boolean reportedLate;

		/** The part of the key space the call went to, as {@link ScriptCaller#partition} says. */
		final int partition;

		/**
		 * Whether Redis may have run the call, taking its permits, though no reply said so: not for a call never
		 * sent, nor for one Redis answered it ran after its deadline.
		 */
		final boolean mayHaveRun;

		CallFailure(FailureKind kind, Throwable cause, long sentNanos) {
			this(kind, cause, sentNanos, false, 0);
		}

		CallFailure(FailureKind kind, Throwable cause, long sentNanos, int partition) {
			this(kind, cause, sentNanos, false, partition);
		}

		CallFailure(FailureKind kind, Throwable cause, long sentNanos, boolean reportedLate, int partition) {
			super(cause);
			this.kind = kind;
			this.sentNanos = sentNanos;
			this.reportedLate = reportedLate;
			this.partition = partition;
			boolean late = false;
			for (Throwable c = cause; c != null; c = c.getCause()) {
				late |= late(c);
			}
			this.mayHaveRun = kind != FailureKind.UNREACHABLE && kind != FailureKind.CLIENT_BUSY && kind != FailureKind.LOST
					&& !late;
		}

		@Override
		public synchronized Throwable getCause() {
			return java.util.Objects.requireNonNull(super.getCause());
		}

	}

}
