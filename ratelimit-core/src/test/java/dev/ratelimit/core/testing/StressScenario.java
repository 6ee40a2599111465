package dev.ratelimit.core.testing;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.redis.RedisRateLimitStore;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A fleet of three stores, each on a client of its own, on one real {@code redis-server} of the scenario's own,
 * under what a fleet meets besides a healthy Redis: 300 requests for one key of a limit of 100 per hour, sent by 60
 * threads released at once, round-robin over the three, while Redis stalls for 200 ms ({@code CLIENT PAUSE}),
 * while the host is busy and the clients are new, while Redis hangs ({@code SIGSTOP}) for a second, is killed,
 * forgets everything ({@code FLUSHALL}), or is killed and restarted empty;
 * the thread whose decision is the {@value #FAULT_AT}th breaks Redis while the others go on. The stores are built
 * as a user gets them: the defaults, and a key prefix.
 * <p>
 * Through a stall or a busy host the fleet admits at most what one store admits alone plus one request per other
 * instance; without a fault, exactly what one store admits, all of it decided by Redis. When Redis stops answering
 * with calls in flight, or forgets, at most what Redis admitted plus the fleet's shares.
 */
public final class StressScenario implements AutoCloseable {

	/** How many stores share the Redis. */
	public static final int INSTANCES = 3;

	/** How many requests each burst sends. */
	public static final int REQUESTS = 300;

	/** The limit of the policy, per hour. */
	public static final long LIMIT = 100;

	private static final int THREADS = 60;

	/** After how many decisions Redis breaks: well before the limit is reached. */
	private static final int FAULT_AT = 30;

	/** Far longer than any burst may take: the bound only makes a hung request fail the test. */
	private static final long BOUND_SECONDS = 60;

	private static final String RUN = Long.toString(ThreadLocalRandom.current().nextLong() >>> 1, 36);

	private final AtomicInteger fleets = new AtomicInteger();

	private final ExecutorService threads = Executors.newCachedThreadPool((task) -> {
		Thread thread = new Thread(task, "stress");
		thread.setDaemon(true);
		return thread;
	});

	private final RedisServerProcess server;

	private final Function<RedisServerProcess, FleetScenario.Client> clients;

	private List<FleetScenario.Client> fleetClients;

	/** What a fleet meets. */
	public enum Fault {

		/** Nothing: every reply comes in time. */
		NONE(5, false),

		/** {@code CLIENT PAUSE 200 WRITE}: every script waits 200 ms, shorter than the maximum wait. */
		STALL(10, false),

		/** From the start, new clients and as many busy threads as the host has cores, twice over. */
		BUSY_HOST(5, false),

		/** {@code SIGSTOP} for a second, longer than the maximum wait. */
		HUNG(3, true),

		/** {@code SIGKILL}, restarted only after the burst. */
		KILLED(3, true),

		/** {@code FLUSHALL}: Redis forgets what it admitted, and answers on. */
		FLUSHED(10, true),

		/** {@code SIGKILL}, then restarted empty at once, with calls in flight. */
		EMPTIED(5, true);

		final int repetitions;

		/**
		 * Whether Redis stops answering for longer than the maximum wait with calls in flight, or forgets what it
		 * admitted: the fleet then admits at most what Redis admitted plus its shares.
		 */
		final boolean outage;

		Fault(int repetitions, boolean outage) {
			this.repetitions = repetitions;
			this.outage = outage;
		}

	}

	/**
	 * Starts a {@code redis-server} of the scenario's own, or skips, or fails where Redis is required.
	 * @param clients opens a new client of one instance on the given server each time it is called
	 */
	public StressScenario(Function<RedisServerProcess, FleetScenario.Client> clients) {
		if (!RedisServerProcess.isAvailable()) {
			TestRedis.skipOrFail("there is no redis-server on the PATH to break");
		}
		this.server = RedisServerProcess.start();
		this.clients = clients;
		this.fleetClients = openClients();
	}

	/**
	 * Runs the fault's repetitions on the policy and asserts its bounds, after printing what each admitted.
	 * @param fault what the fleet meets
	 * @param policy the policy, of {@link #LIMIT} per hour
	 * @param label names the clients in the printed line
	 */
	// the log recorder only keeps the failure policy's stack traces out of the output
	@SuppressWarnings("try")
	public void run(Fault fault, RateLimitPolicy policy, String label) {
		long alone = FleetScenario.referenceAllowed(List.of(policy), REQUESTS);
		List<Outcome> outcomes = new ArrayList<>();
		try (LogRecorder log = LogRecorder.record(RedisRateLimitStore.class.getName())) {
			for (int repetition = 0; repetition < fault.repetitions; repetition++) {
				outcomes.add(burst(fault, policy));
			}
		}
		System.out.println("Fleet of " + INSTANCES + " on " + label + " under " + fault + ", " + policy.algorithm()
				+ " " + LIMIT + " per hour, " + REQUESTS + " requests: allowed "
				+ outcomes.stream().map(Outcome::allowed).toList() + " (one store alone " + alone + ")"
				+ ", by the failure policy " + outcomes.stream().map(Outcome::byFailurePolicy).toList()
				+ ", slowest (ms) " + outcomes.stream().map(Outcome::slowestMillis).toList());
		// a Redis that dies with calls in flight and answers again within the window, or forgets: what it
		// admitted, and at most the fleet's shares besides, which each instance starts from what Redis last told it
		long bound = fault.outage ? 2 * alone + INSTANCES - 1 : alone + INSTANCES - 1;
		assertThat(outcomes).allSatisfy((outcome) -> assertThat(outcome.allowed()).as("allowed")
			.isLessThanOrEqualTo(bound));
		if (fault == Fault.NONE) {
			assertThat(outcomes).allSatisfy((outcome) -> {
				assertThat(outcome.allowed()).as("allowed").isEqualTo(alone);
				assertThat(outcome.byFailurePolicy()).as("decided by the failure policy").isZero();
			});
		}
	}

	private Outcome burst(Fault fault, RateLimitPolicy policy) {
		List<FleetScenario.Client> executors = (fault == Fault.BUSY_HOST) ? openClients() : this.fleetClients;
		AtomicInteger byFailurePolicy = new AtomicInteger();
		String prefix = "stress:" + RUN + ":" + this.fleets.incrementAndGet() + ":";
		List<RedisRateLimitStore> stores = executors.stream()
			.map((client) -> RedisRateLimitStore.builder(client.executor())
				.keyPrefix(prefix)
				.onFailure((policies, cause) -> byFailurePolicy.incrementAndGet())
				.build())
			.toList();
		AtomicBoolean busy = new AtomicBoolean(fault == Fault.BUSY_HOST);
		try {
			if (fault == Fault.BUSY_HOST) {
				for (int i = 0; i < 2 * Runtime.getRuntime().availableProcessors(); i++) {
					this.threads.execute(() -> spin(busy));
				}
			}
			for (RedisRateLimitStore store : stores) {
				warmUp(store, policy);
			}
			return send(fault, stores, policy, byFailurePolicy);
		}
		finally {
			busy.set(false);
			// back before the instances leave the fleet: each leave waits the maximum wait for a Redis that is gone,
			// one instance after the other, which is no part of the burst
			if (fault == Fault.KILLED) {
				this.server.restart();
			}
			stores.forEach(RedisRateLimitStore::close);
			if (fault == Fault.BUSY_HOST) {
				executors.forEach(FleetScenario.Client::close);
			}
		}
	}

	/** Warms the store up as the starter does, once its client has reconnected after a restart of Redis. */
	private static void warmUp(RedisRateLimitStore store, RateLimitPolicy policy) {
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(BOUND_SECONDS);
		while (true) {
			try {
				store.warmUp().orElseThrow().warmUp(List.of(List.of(policy))).toCompletableFuture()
					.get(BOUND_SECONDS, TimeUnit.SECONDS);
				return;
			}
			catch (ExecutionException | TimeoutException ex) {
				if (System.nanoTime() - deadline > 0) {
					throw new IllegalStateException("Redis did not answer the warm-up", ex);
				}
				pause(Duration.ofMillis(50));
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new IllegalStateException("Interrupted during the warm-up", ex);
			}
		}
	}

	private Outcome send(Fault fault, List<RedisRateLimitStore> stores, RateLimitPolicy policy,
			AtomicInteger byFailurePolicy) {
		AtomicInteger decided = new AtomicInteger();
		List<long[]> sent = Burst.release(this.threads, THREADS, (first) -> () -> {
			long allowed = 0;
			long slowest = 0;
			for (int request = first; request < REQUESTS; request += THREADS) {
				long started = System.nanoTime();
				allowed += stores.get(request % INSTANCES).limiter(policy).decide("hot").allowed() ? 1 : 0;
				slowest = Math.max(slowest, System.nanoTime() - started);
				if (decided.incrementAndGet() == FAULT_AT) {
					breakRedis(fault);
				}
			}
			return new long[] { allowed, slowest };
		}, () -> {
		}, BOUND_SECONDS);
		long allowed = sent.stream().mapToLong((each) -> each[0]).sum();
		long slowest = sent.stream().mapToLong((each) -> each[1]).max().orElse(0);
		return new Outcome(allowed, byFailurePolicy.get(), TimeUnit.NANOSECONDS.toMillis(slowest));
	}

	private void breakRedis(Fault fault) {
		switch (fault) {
			case STALL -> this.server.command("CLIENT", "PAUSE", "200", "WRITE");
			case HUNG -> {
				this.server.pause();
				this.threads.execute(() -> {
					// a hang longer than the maximum wait, ended from outside as an operator would
					pause(Duration.ofSeconds(1));
					this.server.resume();
				});
			}
			case KILLED -> this.server.kill();
			case FLUSHED -> this.server.command("FLUSHALL");
			case EMPTIED -> {
				this.server.kill();
				this.server.restart();
			}
			case NONE, BUSY_HOST -> {
			}
		}
	}

	private static void pause(Duration duration) {
		try {
			Thread.sleep(duration.toMillis());
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	private static void spin(AtomicBoolean busy) {
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(BOUND_SECONDS);
		while (busy.get() && System.nanoTime() - deadline < 0) {
			Thread.onSpinWait();
		}
	}

	/** New clients, after Redis forgot its scripts, so that connections and scripts are both cold. */
	private List<FleetScenario.Client> openClients() {
		this.server.command("SCRIPT", "FLUSH");
		List<FleetScenario.Client> opened = new ArrayList<>();
		for (int i = 0; i < INSTANCES; i++) {
			opened.add(this.clients.apply(this.server));
		}
		return opened;
	}

	@Override
	public void close() {
		this.threads.shutdownNow();
		this.fleetClients.forEach(FleetScenario.Client::close);
		this.server.close();
	}

	private record Outcome(long allowed, long byFailurePolicy, long slowestMillis) {
	}

}
