package dev.ratelimit.spring.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.Decision;
import dev.ratelimit.core.FailurePolicy;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.redis.RedisRateLimitStore;
import dev.ratelimit.core.redis.RedisScriptExecutor;
import dev.ratelimit.core.testing.CommandStats;
import dev.ratelimit.core.testing.DelayingProxy;
import dev.ratelimit.core.testing.LogRecorder;
import dev.ratelimit.core.testing.RedisServerProcess;
import dev.ratelimit.core.testing.RunQueueWait;
import dev.ratelimit.core.testing.TestRedis;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The fault matrix: every fault, on both of the starter's clients, under each failure policy, for a fleet of
 * three instances sharing one Redis, which each case finds as a new server would be: empty, its statistics and
 * scripts reset, healthy, and reached directly or through a proxy that forwards on time. Each case sends traffic
 * before, during and after the fault and checks what the store promises: no request waits longer than the maximum
 * wait and 50 ms; Redis admits no more than its exact limit, and under {@code LOCAL} the fleet as a whole, Redis
 * included, no more than {@code limit + instances - 1} (a Redis restarted empty forgets what it admitted, and admits its limit again);
 * {@code ALLOW} and {@code DENY} decide as they say; no call runs in Redis after the store gave up on it (Redis
 * writes exactly once per permit it granted, and under {@code LOCAL} once per instance and policy to be told what
 * the failure policy admitted);
 * Redis decides again within a second of being back; and the log holds at most one stack trace per instance.
 * The table it prints is the one in {@code docs/redis.md}.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RedisFaultMatrixIT {

	private static final Duration TIMEOUT = Duration.ofMillis(100);

	/** How long a request waits for Redis' reply: the default for the timeout. */
	private static final Duration MAX_WAIT = RedisRateLimitStore.defaultMaxWait(TIMEOUT);

	/** What a request may wait beyond the maximum wait: the promise the matrix checks. */
	private static final Duration LATENCY_SLACK = Duration.ofMillis(50);

	/** The first failure of a JVM also loads the classes of the failure path. */
	private static final Duration COLD_SLACK = Duration.ofMillis(250);

	private static final Duration FAULT = Duration.ofMillis(1500);

	private static final Duration RECOVERY = Duration.ofSeconds(1);

	private static final int INSTANCES = 3;

	private static final int THREADS = 12;

	/** A request per thread at most this often, so that a case sends a bounded number of requests. */
	private static final long PACE_MICROS = 2_000;

	/** 30 per hour: no permit comes back within a case, so every admission counts against one limit. */
	private static final RateLimitPolicy POLICY = RateLimitPolicy.of("api", Algorithm.GCRA, 30, Duration.ofHours(1));

	/**
	 * Every other request, a policy that always admits: Redis writes for each of them and only denies the other
	 * policy's, so that a Redis whose writes fail answers every other call.
	 */
	private static final RateLimitPolicy UNLIMITED = RateLimitPolicy.of("bulk", Algorithm.GCRA, 1_000_000,
			Duration.ofHours(1));

	private final List<String> rows = new ArrayList<>();

	private boolean coldPathTaken;

	/** The Redis that every case breaks and heals, started by the first case. */
	private @Nullable RedisServerProcess server;

	private @Nullable DelayingProxy proxy;

	/** Reads the server's statistics over a connection of each reading's own. */
	private @Nullable RedisClient statistics;

	enum Client {

		LETTUCE, JEDIS

	}

	enum Fault {

		/** Every reply arrives 150 ms late through a proxy: Redis runs each call on time. */
		LATE_REPLIES,

		/** {@code CLIENT PAUSE 200 WRITE}: every script waits 200 ms, once, as in a pause of Redis' process. */
		STALL,

		/** The server is stopped with {@code SIGSTOP}: connections stay open, nothing is read. */
		HUNG,

		/** The server is killed with {@code SIGKILL} and restarted empty on the same port. */
		KILLED,

		/** {@code maxmemory} below what Redis holds, with {@code noeviction}: every write fails with OOM. */
		MAXMEMORY,

		/** The server becomes a replica: every write fails with READONLY. */
		READONLY,

		/** Jedis' pool holds 2 connections for 64 concurrent requests on a healthy Redis. */
		POOL_EXHAUSTED

	}

	static Stream<Arguments> cases() {
		List<Arguments> cases = new ArrayList<>();
		for (Fault fault : Fault.values()) {
			for (Client client : Client.values()) {
				if (fault == Fault.POOL_EXHAUSTED && client == Client.LETTUCE) {
					continue;
				}
				for (FailurePolicy policy : FailurePolicy.values()) {
					cases.add(Arguments.of(fault, client, policy));
				}
			}
		}
		return cases.stream();
	}

	@AfterAll
	void stopRedis() {
		if (this.statistics != null) {
			this.statistics.shutdown();
		}
		if (this.proxy != null) {
			this.proxy.close();
		}
		if (this.server != null) {
			this.server.close();
		}
	}

	@AfterAll
	void printMatrix() {
		System.out.println("| fault | client | failure policy | requests | by the failure policy"
				+ " | limited: allowed by Redis | limited: allowed / denied by the failure policy"
				+ " | worst latency (ms) | recovery (ms) | Redis writes after giving up | log lines (stack traces) |");
		System.out.println("|---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|");
		this.rows.forEach(System.out::println);
	}

	@ParameterizedTest(name = "{0} on {1} under {2}")
	@MethodSource("cases")
	void staysWithinItsBoundsThroughTheFault(Fault fault, Client client, FailurePolicy failurePolicy)
			throws Exception {
		if (!RedisServerProcess.isAvailable()) {
			TestRedis.skipOrFail("there is no redis-server on the PATH to break");
		}
		RedisServerProcess server = redis();
		DelayingProxy proxy = Objects.requireNonNull(this.proxy);
		try (LogRecorder log = LogRecorder.record(RedisRateLimitStore.class.getName());
				Fleet fleet = new Fleet(client, (fault == Fault.LATE_REPLIES) ? proxy.port() : server.port(),
						(fault == Fault.POOL_EXHAUSTED) ? 2 : 64, failurePolicy)) {
			fleet.warmUp();
			Traffic before = fleet.send((fault == Fault.POOL_EXHAUSTED) ? 64 : THREADS, Duration.ofMillis(200));
			long writesBefore = writes();

			breakRedis(fault, server, proxy);
			Traffic during = fleet.send((fault == Fault.POOL_EXHAUSTED) ? 64 : THREADS, FAULT);
			long healed = heal(fault, server, proxy);
			long writesAtHeal = (fault == Fault.KILLED) ? 0 : writes();
			Traffic after = fleet.sendUntilRedisDecides(healed, RECOVERY.multipliedBy(3));
			// quiet: nothing the store gave up on may run now
			Thread.sleep(300);
			long writesAfter = writes();

			List<Traffic> all = List.of(before, during, after);
			long allowedByRedis = all.stream().mapToLong((traffic) -> traffic.allowedByRedis.get()).sum();
			long allowedByPolicy = all.stream().mapToLong((traffic) -> traffic.allowedByPolicy.get()).sum();
			long deniedByPolicy = all.stream().mapToLong((traffic) -> traffic.deniedByPolicy.get()).sum();
			long requests = all.stream().mapToLong((traffic) -> traffic.latencies.size()).sum();
			long byFailurePolicy = all.stream().mapToLong((traffic) -> traffic.byFailurePolicy.get()).sum();
			long worstNanos = all.stream().mapToLong(Traffic::worstNanos).max().orElseThrow();
			long worstOwnNanos = all.stream().mapToLong(Traffic::worstOwnNanos).max().orElseThrow();
			long recoveryNanos = after.recoveredNanos - healed;
			// once Redis answers again it writes once per permit it grants, of either policy: nothing else
			long lateWrites = (writesAfter - writesAtHeal) - after.writesByRedis.get();
			this.rows.add(String.format(Locale.ROOT, "| %s | %s | %s | %d | %d | %d | %d / %d | %d | %d | %d | %d (%d) |",
					fault.name().toLowerCase(Locale.ROOT).replace('_', ' '), client.name().toLowerCase(Locale.ROOT),
					failurePolicy, requests, byFailurePolicy, allowedByRedis, allowedByPolicy, deniedByPolicy,
					TimeUnit.NANOSECONDS.toMillis(worstNanos), TimeUnit.NANOSECONDS.toMillis(recoveryNanos), lateWrites,
					log.lines(), log.linesWithStackTrace()));

			Duration slack = this.coldPathTaken ? LATENCY_SLACK : COLD_SLACK;
			this.coldPathTaken = true;
			// 36 threads share two cores here: what the store promises is the wait it adds, not the machine's
			assertThat(Duration.ofNanos(worstOwnNanos))
				.as("worst latency, less waiting for a CPU (%d ms in all)", TimeUnit.NANOSECONDS.toMillis(worstNanos))
				.isLessThan(MAX_WAIT.plus(slack));
			// a Redis restarted empty has forgotten what it admitted before
			long redisLimit = (fault == Fault.KILLED) ? 2 * POLICY.limit() : POLICY.limit();
			assertThat(allowedByRedis).as("allowed by Redis").isLessThanOrEqualTo(redisLimit);
			switch (failurePolicy) {
				case ALLOW -> assertThat(deniedByPolicy).as("denied by ALLOW").isZero();
				case DENY -> assertThat(allowedByPolicy).as("allowed by DENY").isZero();
				case LOCAL -> assertThat(allowedByRedis + allowedByPolicy).as("allowed by the fleet, Redis included")
					.isLessThanOrEqualTo(redisLimit + INSTANCES - 1);
			}
			if (fault == Fault.POOL_EXHAUSTED) {
				assertThat(allowedByPolicy + deniedByPolicy).as("decisions by the failure policy").isZero();
			}
			assertThat(recoveryNanos).as("recovery").isLessThan(RECOVERY.toNanos());
			// under LOCAL each instance also tells Redis, once per policy, what the failure policy admitted meanwhile;
			// after an empty restart each restores the state Redis lost: a take and a mark
			long told = (failurePolicy == FailurePolicy.LOCAL) ? 2 * INSTANCES : 0;
			long restored = (fault == Fault.KILLED) ? 2 * INSTANCES : 0;
			assertThat(lateWrites).as("writes in Redis after the store gave up").isLessThanOrEqualTo(told + restored);
			assertThat(writesBefore).as("writes before the fault").isPositive();
			assertThat(log.linesWithStackTrace()).as("stack traces").isLessThanOrEqualTo(INSTANCES);
		}
	}

	/**
	 * The Redis of the matrix as a case expects to find it, as new: running, forwarded to on time, empty, without
	 * scripts, its statistics reset and no client held by a pause that a case began.
	 */
	private RedisServerProcess redis() {
		if (this.server == null) {
			this.server = RedisServerProcess.start();
			this.proxy = DelayingProxy.start(this.server.port());
			this.statistics = RedisClient.create(this.server.uri());
		}
		RedisServerProcess server = this.server;
		// a case that failed may not have healed what it broke
		server.restart();
		server.resume();
		server.promote();
		server.configSet("maxmemory", "0");
		expect(server, "+OK", "CLIENT", "UNPAUSE");
		expect(server, "+OK", "FLUSHALL");
		expect(server, "+OK", "SCRIPT", "FLUSH");
		expect(server, "+OK", "CONFIG", "RESETSTAT");
		Objects.requireNonNull(this.proxy).resume();
		this.proxy.dropConnections();
		return server;
	}

	private static void expect(RedisServerProcess server, String reply, String... command) {
		assertThat(server.command(command)).as(String.join(" ", command)).isEqualTo(reply);
	}

	private static void breakRedis(Fault fault, RedisServerProcess server, DelayingProxy proxy) {
		switch (fault) {
			case LATE_REPLIES -> proxy.delayReplies(Duration.ofMillis(150));
			case STALL -> server.clientPause(200);
			case HUNG -> server.pause();
			case KILLED -> server.kill();
			case MAXMEMORY -> {
				server.configSet("maxmemory-policy", "noeviction");
				server.configSet("maxmemory", "1");
			}
			case READONLY -> server.command("REPLICAOF", "127.0.0.1", "1");
			case POOL_EXHAUSTED -> {
			}
		}
	}

	/** Ends the fault; returns when Redis could answer again. */
	private static long heal(Fault fault, RedisServerProcess server, DelayingProxy proxy) {
		switch (fault) {
			case LATE_REPLIES -> proxy.delayReplies(Duration.ZERO);
			case STALL -> {
			}
			case HUNG -> server.resume();
			case KILLED -> server.restart();
			case MAXMEMORY -> server.configSet("maxmemory", "0");
			case READONLY -> server.promote();
			case POOL_EXHAUSTED -> {
			}
		}
		return System.nanoTime();
	}

	private long writes() {
		try (StatefulRedisConnection<String, String> connection = Objects.requireNonNull(this.statistics).connect()) {
			// the decision scripts write with SET, the heartbeat with ZADD
			return CommandStats.read(connection.sync()).calls("set");
		}
	}

	/** What one phase of traffic saw. */
	private static final class Traffic {

		final AtomicInteger allowedByRedis = new AtomicInteger();

		final AtomicInteger allowedByPolicy = new AtomicInteger();

		final AtomicInteger deniedByPolicy = new AtomicInteger();

		/** Decisions of either policy that the failure policy made. */
		final AtomicInteger byFailurePolicy = new AtomicInteger();

		/** Permits Redis granted, of either policy: each is one write. */
		final AtomicInteger writesByRedis = new AtomicInteger();

		final ConcurrentLinkedQueue<Long> latencies = new ConcurrentLinkedQueue<>();

		/** Each latency less the time its thread waited for a CPU: what the store made it wait. */
		final ConcurrentLinkedQueue<Long> ownLatencies = new ConcurrentLinkedQueue<>();

		volatile long recoveredNanos;

		long worstNanos() {
			return this.latencies.stream().mapToLong(Long::longValue).max().orElse(0);
		}

		long worstOwnNanos() {
			return this.ownLatencies.stream().mapToLong(Long::longValue).max().orElse(0);
		}

	}

	/** Three instances, each a store on a client of its own, sharing one Redis and one key prefix. */
	private static final class Fleet implements AutoCloseable {

		private final List<AutoCloseable> clients = new ArrayList<>();

		private final List<RedisRateLimitStore> stores = new ArrayList<>();

		private final ThreadLocal<Boolean> byPolicy = ThreadLocal.withInitial(() -> false);

		private final ExecutorService threads = Executors.newCachedThreadPool((task) -> {
			Thread thread = new Thread(task, "fault-matrix-request");
			thread.setDaemon(true);
			return thread;
		});

		Fleet(Client client, int port, int poolSize, FailurePolicy failurePolicy) {
			RedisStandaloneConfiguration configuration = new RedisStandaloneConfiguration("127.0.0.1", port);
			for (int i = 0; i < INSTANCES; i++) {
				RedisScriptExecutor executor = switch (client) {
					case LETTUCE -> {
						LettuceConnectionFactory factory = new LettuceConnectionFactory(configuration);
						factory.afterPropertiesSet();
						factory.start();
						SpringDataRedisScriptExecutor lettuce = new SpringDataRedisScriptExecutor(factory);
						this.clients.add(lettuce);
						this.clients.add(factory::destroy);
						yield lettuce;
					}
					case JEDIS -> {
						JedisScriptExecutor jedis = new JedisScriptExecutor(new JedisConnectionFactory(configuration),
								MAX_WAIT, poolSize);
						this.clients.add(jedis);
						yield jedis;
					}
				};
				this.stores.add(RedisRateLimitStore.builder(executor)
					.keyPrefix("matrix:")
					.timeout(TIMEOUT)
					.failurePolicy(failurePolicy)
					.onFailure((policies, cause) -> this.byPolicy.set(true))
					.build());
			}
		}

		/**
		 * Warms every instance up, and makes sure that each has counted the whole fleet, as a running fleet has:
		 * an instance that joined before the others learns of them at its next heartbeat, about a second later,
		 * or at once when it warms up again.
		 */
		void warmUp() throws Exception {
			long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
			for (RedisRateLimitStore store : this.stores) {
				warmUp(store, deadline);
			}
			while (this.stores.stream().anyMatch((store) -> store.fleet().orElseThrow().size() < INSTANCES)) {
				if (System.nanoTime() > deadline) {
					throw new IllegalStateException("The fleet never counted itself: "
							+ this.stores.stream().map((store) -> store.fleet().orElseThrow().size()).toList());
				}
				for (RedisRateLimitStore store : this.stores) {
					if (store.fleet().orElseThrow().size() < INSTANCES) {
						warmUp(store, deadline);
					}
				}
			}
		}

		private static void warmUp(RedisRateLimitStore store, long deadline) throws Exception {
			// a client still opening fails the warm-up after the timeout, as at an application's start
			while (store.warmUp().orElseThrow().warmUp(List.of(List.of(POLICY), List.of(UNLIMITED)))
				.handle((done, ex) -> ex == null)
				.toCompletableFuture()
				.get(10, TimeUnit.SECONDS) == Boolean.FALSE) {
				if (System.nanoTime() > deadline) {
					throw new IllegalStateException("The fleet never warmed up");
				}
			}
		}

		Traffic send(int threads, Duration duration) throws Exception {
			return send(threads, System.nanoTime() + duration.toNanos(), -1);
		}

		/** Sends until every instance had a decision by Redis after {@code healed}, or {@code limit} passed. */
		Traffic sendUntilRedisDecides(long healed, Duration limit) throws Exception {
			return send(THREADS, System.nanoTime() + limit.toNanos(), healed);
		}

		private Traffic send(int threadCount, long end, long healed) throws Exception {
			Traffic traffic = new Traffic();
			AtomicBoolean[] recovered = new AtomicBoolean[INSTANCES];
			for (int i = 0; i < INSTANCES; i++) {
				recovered[i] = new AtomicBoolean(healed < 0);
			}
			AtomicInteger recoveredCount = new AtomicInteger(healed < 0 ? INSTANCES : 0);
			CountDownLatch start = new CountDownLatch(1);
			List<Future<?>> senders = new ArrayList<>();
			for (int t = 0; t < threadCount; t++) {
				int first = t;
				senders.add(this.threads.submit(() -> {
					start.await();
					int instance = first % INSTANCES;
					boolean limited = first % 2 == 0;
					while (System.nanoTime() < end && (healed < 0 || recoveredCount.get() < INSTANCES)) {
						this.byPolicy.set(false);
						long sent = System.nanoTime();
						long queuedBefore = RunQueueWait.nanos();
						Decision decision = this.stores.get(instance).limiter(limited ? POLICY : UNLIMITED)
							.decide("client");
						long received = System.nanoTime();
						traffic.latencies.add(received - sent);
						traffic.ownLatencies.add(received - sent - (RunQueueWait.nanos() - queuedBefore));
						if (!this.byPolicy.get() && decision.allowed()) {
							traffic.writesByRedis.incrementAndGet();
						}
						if (this.byPolicy.get()) {
							traffic.byFailurePolicy.incrementAndGet();
						}
						if (limited && this.byPolicy.get()) {
							(decision.allowed() ? traffic.allowedByPolicy : traffic.deniedByPolicy).incrementAndGet();
						}
						else if (limited && decision.allowed()) {
							traffic.allowedByRedis.incrementAndGet();
						}
						// only Redis admits the unlimited policy: a limited request may be denied again locally
						if (!limited && !this.byPolicy.get() && healed >= 0
								&& recovered[instance].compareAndSet(false, true)) {
							traffic.recoveredNanos = Math.max(traffic.recoveredNanos, received);
							recoveredCount.incrementAndGet();
						}
						instance = (instance + 1) % INSTANCES;
						limited = !limited;
						TimeUnit.MICROSECONDS.sleep(PACE_MICROS);
					}
					return null;
				}));
			}
			start.countDown();
			for (Future<?> sender : senders) {
				sender.get(60, TimeUnit.SECONDS);
			}
			if (healed >= 0 && recoveredCount.get() < INSTANCES) {
				traffic.recoveredNanos = Long.MAX_VALUE / 2;
			}
			return traffic;
		}

		@Override
		public void close() {
			this.stores.forEach(RedisRateLimitStore::close);
			for (AutoCloseable client : this.clients) {
				try {
					client.close();
				}
				catch (Exception ex) {
					throw new IllegalStateException("Cannot close a client of the fleet", ex);
				}
			}
			this.threads.shutdownNow();
		}

	}

}
