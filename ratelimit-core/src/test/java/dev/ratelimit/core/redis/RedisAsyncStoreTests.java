package dev.ratelimit.core.redis;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.Test;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.Decision;
import dev.ratelimit.core.FailurePolicy;
import dev.ratelimit.core.KeyedPolicy;
import dev.ratelimit.core.ManualTimeSource;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.RateLimitStore;
import dev.ratelimit.core.internal.OutageDetector;
import dev.ratelimit.core.redis.RedisRateLimitStoreTests.Call;
import dev.ratelimit.core.testing.FailLoudly;
import dev.ratelimit.core.testing.ManualScheduler;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The asynchronous decision path against an executor whose calls the tests answer by hand, each on a thread
 * of its own, as a client's I/O thread would: the calling thread returns before any reply exists, every call
 * after the first is sent from the thread that delivered the reply before it, and nothing that runs on the
 * calling or on a replying thread parks, sleeps, waits or queues for a monitor, as the JVM counts them for each
 * thread.
 */
class RedisAsyncStoreTests {

	private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

	private static final RateLimitPolicy GCRA = RateLimitPolicy.of("api", Algorithm.GCRA, 3, Duration.ofSeconds(10));

	private static final long[] ALLOWED = { 1, 2, 0, 1, 0, 0, 0, 0, 7 };

	private static final long[] DENIED = { 0, 0, 5, 1, 0, 0, 0, 0, 0 };

	private final HeldExecutor redis = new HeldExecutor();

	private final ManualTimeSource time = new ManualTimeSource(0);

	/** Where the tests' stores give up on Redis: when a test moves the time, on the thread that moves it. */
	private final ManualScheduler timeouts = new ManualScheduler(this.time);

	private final List<Thread> listenedOn = new CopyOnWriteArrayList<>();

	private final List<Throwable> causes = new CopyOnWriteArrayList<>();

	@Test
	void seesAContinuationThatWaitsOnTheThreadThatCompletesItsStage() {
		// the measure the other tests rely on: a continuation that waits is caught, one that does not is not
		CompletableFuture<Void> reply = new CompletableFuture<>();
		AtomicReference<Thread> waiter = new AtomicReference<>();
		replyOnceWaitedFor(reply, waiter);
		CompletableFuture<Void> waits = new CompletableFuture<>();
		waits.thenRun(() -> {
			// what a blocking decision would do with a reply that is not there yet
			waiter.set(Thread.currentThread());
			reply.join();
		});
		assertThat(completesWithoutWaiting(() -> waits.complete(null))).isFalse();
		CompletableFuture<Void> computes = new CompletableFuture<>();
		computes.thenApply((none) -> List.of(1, 2, 3).hashCode());
		assertThat(completesWithoutWaiting(() -> computes.complete(null))).isTrue();
	}

	@Test
	void returnsBeforeRedisRepliesAndDecidesOnTheReplyingThreadWithoutWaiting() {
		RedisRateLimitStore store = store(Duration.ofSeconds(30));
		CompletableFuture<List<Decision>> decided = decideWithoutWaiting(store, new KeyedPolicy("k", GCRA));
		assertThat(decided).isNotDone();
		assertThat(this.redis.calls).singleElement()
			.satisfies((call) -> assertThat(call.keys()).containsExactly("ratelimit:{k}:api"));
		AtomicReference<Thread> completedOn = new AtomicReference<>();
		decided.whenComplete((decisions, ex) -> completedOn.set(Thread.currentThread()));

		assertThat(completesWithoutWaiting(() -> this.redis.reply(0, ALLOWED))).isTrue();
		assertThat(decided).isCompletedWithValue(List.of(new Decision(true, 3, 2, 0, 1000, 0, 7)));
		assertThat(completedOn.get().getName()).isEqualTo(COMPLETER);
	}

	@Test
	void sendsTheDecisionAfterACarryOverFromTheThreadThatDeliveredTheCarryOver() {
		RedisRateLimitStore store = store(Duration.ofSeconds(30));
		RateLimitPolicy raised = new RateLimitPolicy("api", Algorithm.GCRA, 6, Duration.ofSeconds(10), 6, 1, 0);
		store.change(GCRA, raised);
		CompletableFuture<List<Decision>> decided = decideWithoutWaiting(store, new KeyedPolicy("k", raised));
		assertThat(decided).isNotDone();
		assertThat(this.redis.calls).singleElement()
			.satisfies((call) -> assertThat(call.sha1()).isEqualTo(RedisScripts.get().carryOver().sha1()));

		assertThat(completesWithoutWaiting(() -> this.redis.reply(0, 1))).isTrue();
		assertThat(decided).isNotDone();
		assertThat(this.redis.calls).hasSize(2);
		assertThat(this.redis.calls.get(1).sha1()).isEqualTo(RedisScripts.get().standalone(Algorithm.GCRA).sha1());
		assertThat(this.redis.senders.get(1).getName()).isEqualTo(COMPLETER);

		assertThat(completesWithoutWaiting(() -> this.redis.reply(1, ALLOWED))).isTrue();
		assertThat(decided).isCompletedWithValueMatching((decisions) -> decisions.get(0).allowed());
	}

	@Test
	void decidesAStackOverSeveralSlotsReplyByReplyWithoutWaiting() {
		String[] keys = keysInSlotOrder();
		RedisRateLimitStore store = builder(Duration.ofSeconds(30)).cluster(true).build();
		CompletableFuture<List<Decision>> decided = decideWithoutWaiting(store, new KeyedPolicy(keys[1], GCRA),
				new KeyedPolicy(keys[0], GCRA));
		// the first slot takes, the second denies: a give-back and a peek of the first slot follow
		for (int call = 0; call < 10 && !decided.isDone(); call++) {
			assertThat(this.redis.calls).as("calls sent").hasSize(call + 1);
			Call sent = this.redis.calls.get(call);
			boolean giveBack = sent.sha1().equals(RedisScripts.get().giveBack().sha1());
			boolean peek = sent.args().get(sent.args().size() - 1).equals("peek");
			long[] reply = giveBack ? new long[] { 1 } : (!peek && sent.keys().get(0).contains(keys[0])) ? ALLOWED
					: DENIED;
			int index = call;
			assertThat(completesWithoutWaiting(() -> this.redis.reply(index, reply))).as("reply %d", call).isTrue();
		}
		assertThat(decided).isCompletedWithValueMatching((decisions) -> !decisions.get(0).allowed()
				&& !decisions.get(1).allowed());
		assertThat(this.redis.calls).extracting((call) -> call.keys().get(0))
			.containsExactly("ratelimit:{" + keys[0] + "}:api", "ratelimit:{" + keys[1] + "}:api",
					"ratelimit:{" + keys[0] + "}:api", "ratelimit:{" + keys[0] + "}:api");
		assertThat(this.redis.calls.get(2).sha1()).isEqualTo(RedisScripts.get().giveBack().sha1());
		assertThat(this.redis.calls.get(3).args()).endsWith("peek");
		assertThat(this.redis.senders.subList(1, 4)).extracting(Thread::getName).containsOnly(COMPLETER);
	}

	@Test
	void decidesByTheFailurePolicyOnTheThreadThatDeliveredTheFailureWithoutWaiting() {
		RedisRateLimitStore store = store(Duration.ofSeconds(30));
		CompletableFuture<List<Decision>> decided = decideWithoutWaiting(store, new KeyedPolicy("k", GCRA));
		assertThat(completesWithoutWaiting(() -> this.redis.replies.get(0)
			.completeExceptionally(new IllegalStateException("OOM command not allowed")))).isTrue();
		assertThat(decided).isCompletedWithValueMatching((decisions) -> !decisions.get(0).allowed());
		assertThat(this.causes).singleElement().isInstanceOf(IllegalStateException.class);
		assertThat(this.listenedOn).extracting(Thread::getName).containsExactly(COMPLETER);
		assertThat(store.failures().orElseThrow().status().failing()).isFalse();
	}

	@Test
	void givesUpAtTheTimeoutOnTheTimersThreadWithoutWaitingAndCancelsTheCall() {
		RedisRateLimitStore store = builder(Duration.ofMillis(50)).ticker(this.time).build();
		CompletableFuture<List<Decision>> decided = decideWithoutWaiting(store, new KeyedPolicy("k", GCRA));
		this.timeouts.advance(Duration.ofMillis(49));
		assertThat(decided).isNotDone();

		assertThat(completesWithoutWaiting(() -> this.timeouts.advance(Duration.ofMillis(1)))).isTrue();
		assertThat(decided).isCompletedWithValueMatching((decisions) -> !decisions.get(0).allowed());
		assertThat(this.redis.replies.get(0)).isCancelled();
		assertThat(this.causes).singleElement().isInstanceOf(TimeoutException.class);
		assertThat(this.listenedOn).extracting(Thread::getName).containsExactly(COMPLETER);
		// a reply that comes after all changes nothing
		List<Decision> decisions = decided.join();
		this.redis.reply(0, ALLOWED);
		assertThat(decided).isCompletedWithValue(decisions);
	}

	@Test
	void waitsPastTheTimeoutForALateReplyAndAnswersWithRedisDecision() {
		RedisRateLimitStore store = builder(Duration.ofMillis(50), Duration.ofMillis(500)).ticker(this.time).build();
		CompletableFuture<List<Decision>> decided = decideWithoutWaiting(store, new KeyedPolicy("k", GCRA));
		this.timeouts.advance(Duration.ofMillis(499));
		assertThat(decided).isNotDone();
		this.redis.reply(0, ALLOWED);
		assertThat(decided).isCompletedWithValueMatching(
				(decisions) -> decisions.get(0).allowed() && decisions.get(0).remaining() == 2);
		assertThat(this.causes).isEmpty();
		assertThat(store.failures().orElseThrow().status().decisions()).isZero();
	}

	@Test
	void sendsACallAgainWhileAClusterMovesItsKeysRatherThanTakingTheFailurePolicy() {
		RedisRateLimitStore store = builder(Duration.ofMillis(50), Duration.ofMillis(500)).ticker(this.time).build();
		CompletableFuture<List<Decision>> decided = decideWithoutWaiting(store, new KeyedPolicy("k", GCRA));
		this.redis.tryAgain(0);
		this.timeouts.advance(Duration.ofNanos(ScriptCaller.TRY_AGAIN_NANOS - 1));
		assertThat(this.redis.calls).hasSize(1);
		this.timeouts.advance(Duration.ofNanos(1));
		assertThat(this.redis.calls).hasSize(2);
		assertThat(this.redis.calls.get(1)).isEqualTo(this.redis.calls.get(0));
		this.redis.tryAgain(1);
		this.timeouts.advance(Duration.ofNanos(ScriptCaller.TRY_AGAIN_NANOS));
		this.redis.reply(2, ALLOWED);
		assertThat(decided).isCompletedWithValueMatching(
				(decisions) -> decisions.get(0).allowed() && decisions.get(0).remaining() == 2);
		assertThat(this.causes).isEmpty();
		assertThat(store.failures().orElseThrow().status().decisions()).isZero();
	}

	@Test
	void givesUpOnACallThatAClusterAnswersTryAgainUntilTheMaximumWait() {
		RedisRateLimitStore store = builder(Duration.ofMillis(20), Duration.ofMillis(50)).ticker(this.time).build();
		CompletableFuture<List<Decision>> decided = decideWithoutWaiting(store, new KeyedPolicy("k", GCRA));
		for (int call = 0; call < 4; call++) {
			this.redis.tryAgain(call);
			this.timeouts.advance(Duration.ofNanos(ScriptCaller.TRY_AGAIN_NANOS));
		}
		// sent at 0, 10, 20 and 30 ms; the one sent at 40 ms could not be sent again within the 50 ms
		this.redis.tryAgain(4);
		assertThat(this.redis.calls).hasSize(5);
		assertThat(decided).isCompletedWithValueMatching((decisions) -> !decisions.get(0).allowed());
		assertThat(this.causes).singleElement()
			.satisfies((cause) -> assertThat(cause).hasMessageStartingWith("TRYAGAIN"));
	}

	@Test
	void givesUpAtTheMaximumWaitAndCancelsTheCall() {
		RedisRateLimitStore store = builder(Duration.ofMillis(50), Duration.ofMillis(500)).ticker(this.time).build();
		CompletableFuture<List<Decision>> decided = decideWithoutWaiting(store, new KeyedPolicy("k", GCRA));
		this.timeouts.advance(Duration.ofMillis(499));
		assertThat(this.redis.replies.get(0)).isNotCancelled();
		this.timeouts.advance(Duration.ofMillis(1));
		assertThat(decided).isCompletedWithValueMatching((decisions) -> !decisions.get(0).allowed());
		assertThat(this.redis.replies.get(0)).isCancelled();
		assertThat(this.causes).singleElement()
			.isInstanceOfSatisfying(TimeoutException.class,
					(cause) -> assertThat(cause).hasMessage("Redis did not answer within 500 ms"));
	}

	@Test
	void declaresAnOutageFromCallsUnansweredAtTheTimeoutWhileTheyStillWaitAndEndsItOnAReplyInTime() {
		RedisRateLimitStore store = builder(Duration.ofMillis(50), Duration.ofMillis(500)).ticker(this.time).build();
		List<CompletableFuture<List<Decision>>> waiting = new ArrayList<>();
		for (int i = 0; i < OutageDetector.FAILURES_TO_SWITCH; i++) {
			waiting.add(decideWithoutWaiting(store, new KeyedPolicy("k" + i, GCRA)));
			this.timeouts.advance(Duration.ofMillis(25));
		}
		this.timeouts.advance(Duration.ofMillis(25));
		assertThat(store.failures().orElseThrow().status().failing()).isTrue();
		// one request probes Redis; the next takes the failure policy at once, without a call
		assertThat(decideWithoutWaiting(store, new KeyedPolicy("probe", GCRA))).isNotDone();
		assertThat(decideWithoutWaiting(store, new KeyedPolicy("new", GCRA)))
			.isCompletedWithValueMatching((decisions) -> !decisions.get(0).allowed());
		assertThat(this.redis.replies).hasSize(OutageDetector.FAILURES_TO_SWITCH + 1);
		assertThat(waiting).allSatisfy((decided) -> assertThat(decided).isNotDone());
		// the late reply still decides its request, but is no sign that Redis is well again
		this.redis.reply(0, ALLOWED);
		assertThat(waiting.get(0)).isCompletedWithValueMatching((decisions) -> decisions.get(0).allowed());
		assertThat(store.failures().orElseThrow().status().failing()).isTrue();
		// a reply within the timeout is: the probe's ends the outage
		this.redis.reply(OutageDetector.FAILURES_TO_SWITCH, ALLOWED);
		assertThat(store.failures().orElseThrow().status().failing()).isFalse();
	}

	@Test
	void answersWithTheReplyThatCameBeforeTheTimeout() {
		RedisRateLimitStore store = builder(Duration.ofMillis(50)).ticker(this.time).build();
		CompletableFuture<List<Decision>> decided = decideWithoutWaiting(store, new KeyedPolicy("k", GCRA));
		this.redis.reply(0, ALLOWED);
		this.timeouts.advance(Duration.ofMillis(50));
		assertThat(decided).isCompletedWithValueMatching((decisions) -> decisions.get(0).allowed());
		assertThat(this.causes).isEmpty();
	}

	@Test
	void givesUpAfterTheTimeoutOnTheJdksTimerByDefault() throws Exception {
		Duration timeout = Duration.ofMillis(50);
		RedisRateLimitStore store = RedisRateLimitStore.builder(this.redis)
			.scheduler(new ManualScheduler(new ManualTimeSource(0)))
			.timeout(timeout)
			.failurePolicy(FailurePolicy.DENY)
			.onFailure((policies, cause) -> this.listenedOn.add(Thread.currentThread()))
			.build();
		long start = System.nanoTime();
		CompletableFuture<List<Decision>> decided = store.decideAllAsync(List.of(new KeyedPolicy("k", GCRA)))
			.toCompletableFuture();
		assertThat(decided).isNotDone();
		assertThat(decided.get(10, TimeUnit.SECONDS)).singleElement()
			.satisfies((decision) -> assertThat(decision.allowed()).isFalse());
		assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(timeout);
		assertThat(this.redis.replies.get(0)).isCancelled();
		assertThat(this.listenedOn).singleElement().isNotSameAs(Thread.currentThread());
	}

	@Test
	void sendsOneDecisionAtATimeToRedisWhileItFails() {
		RedisRateLimitStore store = store(Duration.ofSeconds(30));
		CompletableFuture<List<Decision>> first = decideWithoutWaiting(store, new KeyedPolicy("k", GCRA));
		this.redis.replies.get(0).completeExceptionally(
				new ScriptNotSentException(ScriptNotSentException.Reason.UNREACHABLE, "connection refused", null));
		assertThat(first).isCompletedWithValueMatching((decisions) -> !decisions.get(0).allowed());
		assertThat(store.failures().orElseThrow().status().failing()).isTrue();

		// Redis is failing: this decision probes it, the others take the failure policy at once, without a call
		CompletableFuture<List<Decision>> probe = decideWithoutWaiting(store, new KeyedPolicy("k", GCRA));
		assertThat(probe).isNotDone();
		for (int i = 0; i < 5; i++) {
			assertThat(decideWithoutWaiting(store, new KeyedPolicy("k", GCRA)))
				.isCompletedWithValueMatching((decisions) -> !decisions.get(0).allowed());
		}
		assertThat(this.redis.calls).hasSize(2);

		// a probe that fails lets the next decision probe
		this.redis.replies.get(1).completeExceptionally(new IllegalStateException("still down"));
		assertThat(probe).isCompletedWithValueMatching((decisions) -> !decisions.get(0).allowed());
		CompletableFuture<List<Decision>> again = decideWithoutWaiting(store, new KeyedPolicy("k", GCRA));
		assertThat(this.redis.calls).hasSize(3);
		this.redis.reply(2, ALLOWED);
		assertThat(again).isCompletedWithValueMatching((decisions) -> decisions.get(0).allowed());
		assertThat(store.failures().orElseThrow().status().failing()).isFalse();

		// Redis answers again: every decision goes to it
		decideWithoutWaiting(store, new KeyedPolicy("k", GCRA));
		decideWithoutWaiting(store, new KeyedPolicy("k", GCRA));
		assertThat(this.redis.calls).hasSize(5);
		this.redis.reply(3, ALLOWED);
		this.redis.reply(4, ALLOWED);
	}

	@Test
	void decidesOnTheCallingThreadWhenTheExecutorRunsCallsThere() {
		// as a Jedis executor does: the stage is complete when it is returned, after one call
		RedisRateLimitStoreTests.StubExecutor synchronous = new RedisRateLimitStoreTests.StubExecutor(
				(call) -> CompletableFuture.completedFuture(values(ALLOWED)));
		RedisRateLimitStore store = RedisRateLimitStore.builder(synchronous)
			.scheduler(new ManualScheduler(new ManualTimeSource(0)))
			.build();
		assertThat(store.decideAllAsync(List.of(new KeyedPolicy("k", GCRA))))
			.isCompletedWithValueMatching((decisions) -> decisions.get(0).allowed());
		assertThat(synchronous.calls).hasSize(1);
	}

	@Test
	void failsTheStageInsteadOfThrowingForLimitsItRejects() {
		RedisRateLimitStore store = store(Duration.ofSeconds(30));
		RateLimitPolicy other = RateLimitPolicy.of("api", Algorithm.FIXED_WINDOW, 3, Duration.ofSeconds(10));
		assertThat(store.decideAllAsync(List.of())).isCompletedExceptionally();
		assertThat(store.decideAllAsync(List.of(new KeyedPolicy("k", GCRA), new KeyedPolicy("k", other))))
			.failsWithin(Duration.ZERO)
			.withThrowableThat()
			.havingRootCause()
			.isInstanceOf(IllegalArgumentException.class)
			.withMessageContaining("'api'");
		assertThat(store.giveBackAsync(List.of(new KeyedPolicy("k", GCRA)), List.of())).isCompletedExceptionally();
		assertThat(this.redis.calls).isEmpty();
	}

	@Test
	void givesBackWithoutWaitingAndReportsAFailedGiveBackOnTheThreadThatDeliveredIt() {
		RedisRateLimitStore store = store(Duration.ofSeconds(30));
		List<RateLimitPolicy> notGivenBack = new CopyOnWriteArrayList<>();
		RedisRateLimitStore reporting = builder(Duration.ofSeconds(30))
			.onFailure(new RateLimitStore.FailureListener() {

				@Override
				public void onFailure(List<RateLimitPolicy> policies, Throwable cause) {
				}

				@Override
				public void onGiveBackFailure(List<RateLimitPolicy> policies, Throwable cause) {
					notGivenBack.addAll(policies);
					RedisAsyncStoreTests.this.listenedOn.add(Thread.currentThread());
				}

			})
			.build();
		List<KeyedPolicy> limits = List.of(new KeyedPolicy("k", GCRA));
		List<Decision> taken = List.of(new Decision(true, 3, 2, 0, 1000, 0, 7));

		CompletableFuture<Void> given = giveBackWithoutWaiting(store, limits, taken);
		assertThat(given).isNotDone();
		assertThat(this.redis.calls).singleElement()
			.satisfies((call) -> assertThat(call.sha1()).isEqualTo(RedisScripts.get().giveBack().sha1()));
		assertThat(completesWithoutWaiting(() -> this.redis.reply(0, 1))).isTrue();
		assertThat(given).isCompleted();

		CompletableFuture<Void> failed = giveBackWithoutWaiting(reporting, limits, taken);
		assertThat(failed).isNotDone();
		assertThat(completesWithoutWaiting(() -> this.redis.replies.get(1)
			.completeExceptionally(new IllegalStateException("READONLY"))))
			.isTrue();
		assertThat(failed).as("a failed give-back is reported, not thrown").isCompleted();
		assertThat(notGivenBack).containsExactly(GCRA);
		assertThat(this.listenedOn).extracting(Thread::getName).containsExactly(COMPLETER);
	}

	@Test
	void failsTheStageWithWhatTheListenerThrows() {
		RedisRateLimitStore store = builder(Duration.ofSeconds(30)).onFailure(FailLoudly.ON_REDIS_FAILURE).build();
		CompletableFuture<List<Decision>> decided = decideWithoutWaiting(store, new KeyedPolicy("k", GCRA));
		this.redis.replies.get(0).completeExceptionally(new IllegalStateException("down"));
		assertThat(decided.handle((decisions, ex) -> ex).join()).isInstanceOf(CompletionException.class)
			.cause()
			.isInstanceOf(AssertionError.class)
			.cause()
			.hasMessage("down");
	}

	/** The name of the threads that deliver the replies, or fire the timeouts. */
	private static final String COMPLETER = "completer";

	/**
	 * Asks for a decision, checking that the calling thread did not wait, and returns its stage as it came
	 * back.
	 */
	private static CompletableFuture<List<Decision>> decideWithoutWaiting(RedisRateLimitStore store,
			KeyedPolicy... limits) {
		long before = waits(Thread.currentThread());
		CompletionStage<List<Decision>> stage = store.decideAllAsync(List.of(limits));
		assertThat(waits(Thread.currentThread()) - before).as("times the calling thread waited").isZero();
		return stage.toCompletableFuture();
	}

	private static CompletableFuture<Void> giveBackWithoutWaiting(RedisRateLimitStore store, List<KeyedPolicy> limits,
			List<Decision> decisions) {
		long before = waits(Thread.currentThread());
		CompletionStage<Void> stage = store.giveBackAsync(limits, decisions);
		assertThat(waits(Thread.currentThread()) - before).as("times the calling thread waited").isZero();
		return stage.toCompletableFuture();
	}

	/**
	 * Runs {@code completion} on a thread of its own, named {@link #COMPLETER}, as a client's I/O thread would
	 * complete a call, and tells whether that thread neither parked, slept nor waited, nor queued for a monitor,
	 * while everything chained on the completion ran on it.
	 */
	private static boolean completesWithoutWaiting(Runnable completion) {
		AtomicLong waited = new AtomicLong(-1);
		Thread replier = new Thread(() -> {
			long before = waits(Thread.currentThread());
			completion.run();
			waited.set(waits(Thread.currentThread()) - before);
		}, COMPLETER);
		replier.start();
		try {
			replier.join(TimeUnit.SECONDS.toMillis(30));
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new AssertionError(ex);
		}
		assertThat(replier.isAlive()).as("the replying thread is still at work").isFalse();
		return waited.get() == 0;
	}

	/**
	 * Completes {@code reply} from a thread of its own once the thread in {@code waiter} waits for it, as a client's
	 * I/O thread delivers a reply some time after it was asked for. The waiter always gets to wait, however late it
	 * comes to it: a reply that never comes and a short timeout would let a waiter held up on its way, by loading
	 * classes or by a busy machine, time out before it ever waited.
	 */
	private static void replyOnceWaitedFor(CompletableFuture<Void> reply, AtomicReference<Thread> waiter) {
		long giveUp = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
		Thread replier = new Thread(() -> {
			Thread waiting = waiter.get();
			while ((waiting == null || waiting.getState() != Thread.State.WAITING) && System.nanoTime() < giveUp) {
				Thread.onSpinWait();
				waiting = waiter.get();
			}
			reply.complete(null);
		}, "late-reply");
		replier.setDaemon(true);
		replier.start();
	}

	/** How many times the JVM has seen the thread park, sleep, wait, or queue for a monitor, so far. */
	private static long waits(Thread thread) {
		ThreadInfo info = THREADS.getThreadInfo(thread.getId());
		return info.getWaitedCount() + info.getBlockedCount();
	}

	private RedisRateLimitStore store(Duration timeout) {
		return builder(timeout).build();
	}

	/**
	 * Denies without Redis and records where the failure listener runs; neither the heartbeat nor a timeout
	 * runs by itself. A call is given up on at the timeout.
	 */
	private RedisRateLimitStore.Builder builder(Duration timeout) {
		return builder(timeout, timeout);
	}

	/** As {@link #builder(Duration)}, a call given up on at {@code maxWait}. */
	private RedisRateLimitStore.Builder builder(Duration timeout, Duration maxWait) {
		return RedisRateLimitStore.builder(this.redis)
			.scheduler(new ManualScheduler(new ManualTimeSource(0)))
			.timeouts(this.timeouts)
			.timeout(timeout)
			.maxWait(maxWait)
			.failurePolicy(FailurePolicy.DENY)
			.onFailure((policies, cause) -> {
				this.causes.add(cause);
				this.listenedOn.add(Thread.currentThread());
			});
	}

	/** Two client keys whose slots are in this order. */
	private static String[] keysInSlotOrder() {
		String first = "client-1";
		for (int i = 2;; i++) {
			String second = "client-" + i;
			if (RedisKeys.slot(second) > RedisKeys.slot(first)) {
				return new String[] { first, second };
			}
		}
	}

	private static List<Long> values(long... values) {
		List<Long> list = new ArrayList<>();
		for (long value : values) {
			list.add(value);
		}
		return list;
	}

	/** Keeps every call for the test to answer, and the thread that sent it. */
	private static final class HeldExecutor implements RedisScriptExecutor {

		final List<Call> calls = new CopyOnWriteArrayList<>();

		final List<Thread> senders = new CopyOnWriteArrayList<>();

		final List<CompletableFuture<List<Long>>> replies = new CopyOnWriteArrayList<>();

		@Override
		public CompletionStage<List<Long>> execute(String sha1, String script, List<String> keys, List<String> args) {
			CompletableFuture<List<Long>> reply = new CompletableFuture<>();
			this.replies.add(reply);
			this.senders.add(Thread.currentThread());
			this.calls.add(new Call(sha1, script, keys, args));
			return reply;
		}

		void reply(int call, long... values) {
			this.replies.get(call).complete(values(values));
		}

		/** Answers as a Cluster does while the call's keys are being moved to another node. */
		void tryAgain(int call) {
			this.replies.get(call)
				.completeExceptionally(
						new IllegalStateException("TRYAGAIN Multiple keys request during rehashing of slot"));
		}

	}

}
