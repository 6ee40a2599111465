package dev.ratelimit.core.testing;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;

import org.assertj.core.api.SoftAssertions;

import dev.ratelimit.core.RateLimitStore;
import dev.ratelimit.core.Decision;
import dev.ratelimit.core.ManualTimeSource;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.memory.InMemoryRateLimitStore;
import dev.ratelimit.core.redis.RedisRateLimitStore;
import dev.ratelimit.core.redis.RedisScriptExecutor;

/**
 * A fleet of three {@link RedisRateLimitStore}s, each on a Redis client of its own, sharing one real Redis: 60
 * threads released at once send a burst of requests for one key, round-robin over the three stores, repetition
 * after repetition, each repetition on keys of its own.
 * <p>
 * The stores are built as a user gets them: the default failure policy and the given timeout, nothing else but a
 * key prefix. Most repetitions run on the fleet's long-lived clients; every fifth opens new clients
 * after a {@code SCRIPT FLUSH}, so that both the connections and the scripts are new, and warms them up as the
 * starter does before traffic; the first opens new clients after a {@code SCRIPT FLUSH} and sends the burst at
 * once, unwarmed.
 * <p>
 * What it asserts is what the store promises. Whenever Redis answers within the timeout, every decision is
 * Redis' ({@link RedisRateLimitStore.Builder#onFailure the failure listener} is never called) and the fleet
 * admits exactly what the {@link InMemoryRateLimitStore reference} admits for the same requests at one instant.
 * Only the first calls of an unwarmed client may be late; then each decision the failure policy made must have
 * waited for the timeout itself (Redis was late for that very request), what Redis admitted stays within what
 * the reference admits, and the failure policy admits at most what the reference admits per instance: an
 * instance that has not yet heard of its fleet (no heartbeat has answered) enforces the whole limit.
 * Each burst must end before the reference's outcome for it could change (a refill, a window boundary); a
 * repetition about to start near a window boundary waits until it has passed.
 */
public final class FleetScenario implements AutoCloseable {

	/** How many stores share the Redis. */
	public static final int INSTANCES = 3;

	/**
	 * The stores' timeout: five times the default, so that a busy build machine's scheduling (a reply seen here
	 * was 101 ms late under another build's load) does not turn into decisions by the failure policy. What a reply
	 * later than the timeout costs is the fault matrix's to show; this scenario shows that every decision Redis
	 * answers in time is exact.
	 */
	public static final Duration TIMEOUT = Duration.ofMillis(500);

	/** How many threads send the burst, all released at once. */
	public static final int THREADS = 60;

	/** Every so many repetitions, new clients are opened and warmed up. */
	private static final int NEW_CLIENTS_EVERY = 5;

	/** A burst takes far less than this; a repetition does not start closer than this to a window boundary. */
	private static final long MIN_QUIET_MICROS = TimeUnit.SECONDS.toMicros(2);

	/** Far longer than any burst or warm-up may take: the bound only makes a hung call fail the test. */
	private static final long BOUND_SECONDS = 60;

	private static final String RUN = Long.toString(ThreadLocalRandom.current().nextLong() >>> 1, 36);

	private static final AtomicInteger fleets = new AtomicInteger();

	private final TestRedis redis;

	private final Clients clients;

	private final Duration timeout;

	private final ExecutorService threads = Executors.newFixedThreadPool(THREADS, (task) -> {
		Thread thread = new Thread(task, "fleet-request");
		thread.setDaemon(true);
		return thread;
	});

	private List<Client> fleetClients = List.of();

	/**
	 * Creates the scenario; the fleet's long-lived clients are opened on the first repetition that needs them.
	 * @param redis the Redis the stores share, also asked for its time and told to flush its scripts
	 * @param clients opens a new client of one instance each time it is called
	 * @param timeout the store timeout a user gets by default, set on every store; a decision by the failure
	 * policy that took less than this did not wait for Redis
	 */
	public FleetScenario(TestRedis redis, Clients clients, Duration timeout) {
		this.redis = redis;
		this.clients = clients;
		this.timeout = timeout;
	}

	/**
	 * Opens one instance's client to the shared Redis.
	 */
	@FunctionalInterface
	public interface Clients {

		/**
		 * Opens a new client, with connections of its own.
		 * @return the client
		 */
		Client open();

	}

	/**
	 * One instance's script executor and what to close when the instance goes away.
	 * @param executor the executor the instance's store runs its scripts with
	 * @param resources closes the executor's client
	 */
	public record Client(RedisScriptExecutor executor, AutoCloseable resources) implements AutoCloseable {

		@Override
		public void close() {
			try {
				this.resources.close();
			}
			catch (Exception ex) {
				throw new IllegalStateException("Cannot close the client of " + this.executor, ex);
			}
		}

	}

	/** How the clients of a repetition came to be. */
	enum Start {

		/** the fleet's long-lived clients */
		FLEET_CLIENTS,

		/** new clients, warmed up before traffic */
		NEW_CLIENTS_WARMED_UP,

		/** new clients, sent the burst at once */
		NEW_CLIENTS_UNWARMED

	}

	/**
	 * Runs the repetitions of one endpoint's burst and asserts what the store promises for each, reporting every
	 * repetition that breaks it with its counts.
	 * @param stack the endpoint's policies, decided together when there are several
	 * @param requests how many requests each burst sends
	 * @param repetitions how many bursts to send, each on keys of its own
	 */
	public void run(List<RateLimitPolicy> stack, int requests, int repetitions) {
		long expected = referenceAllowed(stack, requests);
		List<Outcome> outcomes = new ArrayList<>();
		int stackTraces;
		// the failure policy's decisions log stack traces that would drown the test's output
		try (LogRecorder log = LogRecorder.record(RedisRateLimitStore.class.getName())) {
			for (int repetition = 0; repetition < repetitions; repetition++) {
				Start start = (repetition == 0) ? Start.NEW_CLIENTS_UNWARMED
						: (repetition % NEW_CLIENTS_EVERY == 0) ? Start.NEW_CLIENTS_WARMED_UP : Start.FLEET_CLIENTS;
				outcomes.add(repeat(repetition, start, stack, requests, expected));
			}
			stackTraces = log.linesWithStackTrace();
		}
		// the counts of passing runs too, for the record of what the fleet admits
		System.out.println("Fleet of " + INSTANCES + " on " + stack.stream().map(FleetScenario::describe).toList()
				+ ", " + requests + " requests per burst: allowed " + outcomes.stream().map(Outcome::allowed).toList()
				+ " (reference " + expected + "), decided by the failure policy "
				+ outcomes.stream().map(Outcome::byFailurePolicy).toList() + ", slowest decision (ms) "
				+ outcomes.stream().map(Outcome::slowestMillis).toList() + ", stack traces logged " + stackTraces);
		SoftAssertions softly = new SoftAssertions();
		// unwarmed, no instance has heard of the fleet yet: each enforces the whole limit
		long unwarmedBound = INSTANCES * expected;
		for (Outcome outcome : outcomes) {
			softly.assertThat(outcome.spanMicros())
				.as("%s: the burst must end before the reference could admit more", outcome)
				.isLessThan(outcome.quietMicros());
			if (outcome.start() != Start.NEW_CLIENTS_UNWARMED || outcome.byFailurePolicy() == 0) {
				softly.assertThat(outcome.byFailurePolicy()).as("%s: decisions by the failure policy", outcome).isZero();
				softly.assertThat(outcome.allowed()).as("%s: allowed", outcome).isEqualTo(expected);
			}
			else {
				softly.assertThat(outcome.fellBackWithoutWaiting())
					.as("%s: decisions by the failure policy that did not wait for Redis", outcome)
					.isZero();
				softly.assertThat(outcome.allowed() - outcome.allowedByFailurePolicy())
					.as("%s: allowed by Redis", outcome)
					.isLessThanOrEqualTo(expected);
				softly.assertThat(outcome.allowedByFailurePolicy())
					.as("%s: allowed by the failure policy across the fleet", outcome)
					.isLessThanOrEqualTo(unwarmedBound);
			}
		}
		softly.assertAll();
	}

	private static String describe(RateLimitPolicy policy) {
		return policy.algorithm() + " " + policy.limit() + "/" + policy.window();
	}

	/**
	 * What the reference admits when all the requests arrive at one instant.
	 * @param stack the policies, decided together when there are several
	 * @param requests how many requests arrive
	 * @return how many the reference admits
	 */
	public static long referenceAllowed(List<RateLimitPolicy> stack, int requests) {
		InMemoryRateLimitStore reference = InMemoryRateLimitStore.builder()
			.timeSource(new ManualTimeSource(TimeUnit.SECONDS.toNanos(1)))
			.build();
		long allowed = 0;
		for (int i = 0; i < requests; i++) {
			allowed += reference.decideAll("client", stack).stream().allMatch(Decision::allowed) ? 1 : 0;
		}
		return allowed;
	}

	private Outcome repeat(int repetition, Start start, List<RateLimitPolicy> stack, int requests, long expected) {
		List<Client> clients = (start == Start.FLEET_CLIENTS) ? fleetClients() : newClients();
		FailureCount failures = new FailureCount();
		String keyPrefix = "fleet:" + RUN + ":" + fleets.incrementAndGet() + ":";
		List<RedisRateLimitStore> stores = clients.stream()
			.map((client) -> RedisRateLimitStore.builder(client.executor())
				.keyPrefix(keyPrefix)
				.timeout(this.timeout)
				.onFailure(failures)
				.build())
			.toList();
		try {
			if (start != Start.NEW_CLIENTS_UNWARMED) {
				for (RedisRateLimitStore store : stores) {
					await(store.warmUp().orElseThrow().warmUp(List.of(stack)).toCompletableFuture(), "the warm-up");
				}
			}
			awaitNoBoundaryNear(stack);
			return burst(repetition, start, stores, stack, requests, expected, failures);
		}
		finally {
			// the instances leave the fleet before their clients go, as an application's do
			stores.forEach(RedisRateLimitStore::close);
			if (start != Start.FLEET_CLIENTS) {
				clients.forEach(Client::close);
			}
		}
	}

	private List<Client> fleetClients() {
		if (this.fleetClients.isEmpty()) {
			this.fleetClients = newClients();
		}
		return this.fleetClients;
	}

	/** New clients, after Redis forgot its scripts, so that they load them again. */
	private List<Client> newClients() {
		this.redis.commands().scriptFlush();
		List<Client> clients = new ArrayList<>();
		for (int i = 0; i < INSTANCES; i++) {
			clients.add(this.clients.open());
		}
		return clients;
	}

	private Outcome burst(int repetition, Start start, List<RedisRateLimitStore> stores, List<RateLimitPolicy> stack,
			int requests, long expected, FailureCount failures) {
		AtomicLong startMicros = new AtomicLong();
		List<Sample> samples = new ArrayList<>();
		Burst.release(this.threads, THREADS, (first) -> () -> {
			List<Sample> sent = new ArrayList<>();
			for (int request = first; request < requests; request += THREADS) {
				RedisRateLimitStore store = stores.get(request % INSTANCES);
				failures.onThisThread.set(false);
				long started = System.nanoTime();
				boolean allowed = store.decideAll("hot", stack).stream().allMatch(Decision::allowed);
				sent.add(new Sample(allowed, failures.onThisThread.get(), System.nanoTime() - started));
			}
			return sent;
		}, () -> startMicros.set(redisMicros()), BOUND_SECONDS).forEach(samples::addAll);
		long spanMicros = redisMicros() - startMicros.get();
		return new Outcome(repetition, start, expected, count(samples, (s) -> s.allowed),
				count(samples, (s) -> s.allowed && s.byFailurePolicy), failures.calls.get(),
				count(samples, (s) -> s.byFailurePolicy && s.nanos < this.timeout.toNanos()), spanMicros,
				quietMicros(stack, startMicros.get()),
				TimeUnit.NANOSECONDS.toMillis(samples.stream().mapToLong((s) -> s.nanos).max().orElse(0)));
	}

	private static long count(List<Sample> samples, Predicate<Sample> condition) {
		return samples.stream().filter(condition).count();
	}

	/**
	 * How long after {@code nowMicros} the reference still admits the same to a burst that starts then: until the
	 * next boundary of an aligned window, a whole sliding log window, or one emission interval of a bucket.
	 */
	static long quietMicros(List<RateLimitPolicy> stack, long nowMicros) {
		long quiet = Long.MAX_VALUE;
		for (RateLimitPolicy policy : stack) {
			quiet = Math.min(quiet, switch (policy.algorithm()) {
				case FIXED_WINDOW, SLIDING_WINDOW_COUNTER -> policy.windowMicros()
						- Math.floorMod(nowMicros, policy.windowMicros());
				case SLIDING_LOG -> policy.windowMicros();
				case TOKEN_BUCKET, GCRA, LEAKY_BUCKET -> policy.windowMicros() / policy.limit();
			});
		}
		return quiet;
	}

	/** Waits on Redis' clock until no aligned window of the stack ends within {@link #MIN_QUIET_MICROS}. */
	private void awaitNoBoundaryNear(List<RateLimitPolicy> stack) {
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(BOUND_SECONDS);
		while (true) {
			long now = redisMicros();
			long wait = 0;
			for (RateLimitPolicy policy : stack) {
				long window = policy.windowMicros();
				boolean aligned = switch (policy.algorithm()) {
					case FIXED_WINDOW, SLIDING_WINDOW_COUNTER -> true;
					case SLIDING_LOG, TOKEN_BUCKET, GCRA, LEAKY_BUCKET -> false;
				};
				long left = window - Math.floorMod(now, window);
				if (aligned && window > MIN_QUIET_MICROS && left < MIN_QUIET_MICROS) {
					wait = Math.max(wait, left);
				}
			}
			if (wait == 0) {
				return;
			}
			if (System.nanoTime() - deadline > 0) {
				throw new IllegalStateException("No start away from a window boundary within " + BOUND_SECONDS + " s");
			}
			try {
				Thread.sleep(TimeUnit.MICROSECONDS.toMillis(wait) + 1);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new IllegalStateException("Interrupted while waiting for a window boundary", ex);
			}
		}
	}

	private long redisMicros() {
		List<String> time = this.redis.commands().time();
		return Long.parseLong(time.get(0)) * 1_000_000 + Long.parseLong(time.get(1));
	}

	private static void await(CompletableFuture<?> future, String what) {
		try {
			future.get(BOUND_SECONDS, TimeUnit.SECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("Interrupted during " + what, ex);
		}
		catch (ExecutionException | TimeoutException ex) {
			throw new IllegalStateException(what + " failed on a healthy Redis", ex);
		}
	}

	@Override
	public void close() {
		this.threads.shutdownNow();
		this.fleetClients.forEach(Client::close);
		this.fleetClients = List.of();
	}

	/** One decision: whether it admitted the request, whether the failure policy made it, and how long it took. */
	private record Sample(boolean allowed, boolean byFailurePolicy, long nanos) {
	}

	/** Counts the failure listener's calls, and tells the deciding thread that its decision was one. */
	private static final class FailureCount implements RateLimitStore.FailureListener {

		final AtomicInteger calls = new AtomicInteger();

		final ThreadLocal<Boolean> onThisThread = ThreadLocal.withInitial(() -> false);

		@Override
		public void onFailure(List<RateLimitPolicy> policies, Throwable cause) {
			this.calls.incrementAndGet();
			this.onThisThread.set(true);
		}

	}

	/** What one repetition saw. */
	record Outcome(int repetition, Start start, long expected, long allowed, long allowedByFailurePolicy,
			long byFailurePolicy, long fellBackWithoutWaiting, long spanMicros, long quietMicros, long slowestMillis) {

		@Override
		public String toString() {
			return "repetition " + this.repetition + " (" + this.start.name().toLowerCase().replace('_', ' ')
					+ "): allowed " + this.allowed + " (reference " + this.expected + "), the failure policy decided "
					+ this.byFailurePolicy + " (allowed " + this.allowedByFailurePolicy + ", "
					+ this.fellBackWithoutWaiting + " without waiting for Redis), burst "
					+ TimeUnit.MICROSECONDS.toMillis(this.spanMicros) + " ms, slowest decision " + this.slowestMillis
					+ " ms";
		}

	}

}
