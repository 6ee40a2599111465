package dev.ratelimit.spring.redis;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import java.util.function.Predicate;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisCredentials;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.data.redis.connection.RedisClusterConfiguration;
import org.springframework.data.redis.connection.RedisConfiguration;
import org.springframework.data.redis.connection.RedisSentinelConfiguration;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.Decision;
import dev.ratelimit.core.FailurePolicy;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.RateLimiter;
import dev.ratelimit.core.redis.RedisRateLimitStore;
import dev.ratelimit.core.redis.RedisScriptExecutor;
import dev.ratelimit.core.redis.ScriptNotSentException;
import dev.ratelimit.core.testing.LocalRedisCluster;
import dev.ratelimit.core.testing.LocalRedisSentinel;
import dev.ratelimit.core.testing.OpenStores;
import dev.ratelimit.core.testing.RedisExtension;
import dev.ratelimit.core.testing.RedisServerProcess;
import dev.ratelimit.core.testing.TestRedis;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What every executor of the starter must do, whatever its client: return the script's integers, load the
 * scripts again after a {@code SCRIPT FLUSH}, decide on the primary a real Sentinel names and on every node of
 * a real Redis Cluster; and, on a Redis process killed, hung or restarted, report the calls it did not send,
 * send none of them later, and be back within a second of Redis.
 */
@ExtendWith(RedisExtension.class)
abstract class AbstractScriptExecutorIT {

	static final RateLimitPolicy POLICY = RateLimitPolicy.of("api", Algorithm.GCRA, 3, Duration.ofMinutes(1));

	private static final String RUN = Long.toString(ThreadLocalRandom.current().nextLong() >>> 1, 36);

	/** The store's default timeout, which a call waits for before the store gives up on it. */
	static final Duration TIMEOUT = Duration.ofMillis(100);

	/** How long a call may take where the test does not measure it, on a loaded machine. */
	static final Duration PATIENCE = Duration.ofSeconds(5);

	/** A script that touches no key, so that only the commands it is sent with are counted. */
	static final String SCRIPT = "return {1}";

	static final String SHA1 = sha1(SCRIPT);

	final List<Throwable> failures = new ArrayList<>();

	private final OpenStores open = new OpenStores();

	/**
	 * Opens the executor under test on the given connection settings, every wait of whose client, where the
	 * client bounds waits itself, is {@code timeout}.
	 */
	abstract Connection connect(RedisConfiguration configuration, Duration timeout);

	Connection connect(RedisConfiguration configuration) {
		return connect(configuration, Duration.ofSeconds(10));
	}

	/** An executor and how to close what it runs on. */
	record Connection(RedisScriptExecutor executor, Runnable closer) implements AutoCloseable {

		@Override
		public void close() {
			this.closer.run();
		}

	}

	/** Builds a client's connection factory for whichever of the three kinds of configuration it is given. */
	static <F> F connectionFactory(RedisConfiguration configuration,
			Function<RedisStandaloneConfiguration, F> standalone, Function<RedisSentinelConfiguration, F> sentinel,
			Function<RedisClusterConfiguration, F> cluster) {
		if (configuration instanceof RedisSentinelConfiguration sentinelConfiguration) {
			return sentinel.apply(sentinelConfiguration);
		}
		if (configuration instanceof RedisClusterConfiguration clusterConfiguration) {
			return cluster.apply(clusterConfiguration);
		}
		return standalone.apply((RedisStandaloneConfiguration) configuration);
	}

	static RedisStandaloneConfiguration standalone(RedisServerProcess server) {
		return new RedisStandaloneConfiguration("127.0.0.1", server.port());
	}

	static RedisStandaloneConfiguration standalone(TestRedis redis) {
		RedisURI uri = RedisURI.create(redis.uri());
		RedisStandaloneConfiguration configuration = new RedisStandaloneConfiguration(uri.getHost(), uri.getPort());
		RedisCredentials credentials = uri.getCredentialsProvider().resolveCredentials().block();
		if (credentials != null && credentials.hasPassword()) {
			configuration.setPassword(credentials.getPassword());
		}
		return configuration;
	}

	@Test
	void returnsTheScriptsIntegers(TestRedis redis) throws Exception {
		try (Connection connection = connect(standalone(redis))) {
			List<Long> reply = connection.executor()
				.execute("0000000000000000000000000000000000000000", "return {1, 0, -2, 9007199254740992}",
						List.of("k"), List.of())
				.toCompletableFuture()
				.get(10, TimeUnit.SECONDS);
			assertThat(reply).containsExactly(1L, 0L, -2L, 9007199254740992L);
		}
	}

	@Test
	void reloadsTheScriptsAfterAScriptFlush(TestRedis redis) {
		try (Connection connection = connect(standalone(redis))) {
			RateLimiter limiter = store(connection.executor(), "flush").limiter(POLICY);
			List<Boolean> allowed = new ArrayList<>();
			for (int i = 0; i < 4; i++) {
				redis.commands().scriptFlush();
				allowed.add(limiter.tryAcquire("client"));
			}
			assertThat(allowed).containsExactly(true, true, true, false);
			assertThat(this.failures).isEmpty();
		}
	}

	@Test
	void decidesOnThePrimaryASentinelNames() {
		if (!RedisServerProcess.isAvailable()) {
			TestRedis.skipOrFail("there is no redis-server on the PATH to start a Sentinel");
		}
		try (LocalRedisSentinel sentinel = LocalRedisSentinel.start();
				Connection connection = connect(new RedisSentinelConfiguration(LocalRedisSentinel.PRIMARY_NAME,
						Set.of("127.0.0.1:" + sentinel.sentinelPort())))) {
			RateLimiter limiter = store(connection.executor(), "sentinel").limiter(POLICY);
			List<Boolean> allowed = new ArrayList<>();
			for (int i = 0; i < 4; i++) {
				allowed.add(limiter.tryAcquire("client"));
			}
			assertThat(allowed).containsExactly(true, true, true, false);
			assertThat(this.failures).isEmpty();
			// the fleet's heartbeat runs on its own schedule, so only the client's key is certain to be there
			String key = getClass().getSimpleName() + ":sentinel:" + RUN + ":{client}:" + POLICY.name();
			assertThat(sentinel.primary().command("EXISTS", key)).isEqualTo(":1");
		}
	}

	@Test
	void decidesStackedPoliciesOnACluster() {
		if (!LocalRedisCluster.isAvailable()) {
			TestRedis.skipOrFail("there is no redis-server and redis-cli on the PATH to start a cluster");
		}
		try (LocalRedisCluster cluster = LocalRedisCluster.start();
				Connection connection = connect(new RedisClusterConfiguration(
						cluster.nodes().stream().map((node) -> "127.0.0.1:" + node.port()).toList()))) {
			RedisRateLimitStore store = store(connection.executor(), "cluster");
			List<RateLimitPolicy> stack = List.of(
					RateLimitPolicy.of("second", Algorithm.TOKEN_BUCKET, 2, Duration.ofMinutes(1)),
					RateLimitPolicy.of("minute", Algorithm.SLIDING_LOG, 5, Duration.ofMinutes(1)));
			for (int client = 0; client < 100; client++) {
				List<Boolean> allowed = new ArrayList<>();
				for (int i = 0; i < 3; i++) {
					List<Decision> decisions = store.decideAll("client-" + client, stack);
					allowed.add(decisions.get(0).allowed());
				}
				assertThat(allowed).as("client %d", client).containsExactly(true, true, false);
			}
			assertThat(this.failures).isEmpty();
			for (RedisServerProcess node : cluster.nodes()) {
				assertThat(node.command("DBSIZE")).as("keys on port %d", node.port()).isNotEqualTo(":0");
			}
		}
	}

	/**
	 * A Cluster of three primaries with a replica each loses the primary of a client's slot mid-window: once the
	 * replica has taken over and the cluster is OK again, Redis decides that client again within two seconds,
	 * and it never gets more than its limit, what the failure policy admitted meanwhile included.
	 */
	@Test
	void followsAFailoverOfThePrimaryThatServesAClient() {
		if (!LocalRedisCluster.isAvailable()) {
			TestRedis.skipOrFail("there is no redis-server and redis-cli on the PATH to start a cluster");
		}
		try (LocalRedisCluster cluster = LocalRedisCluster.start(1, Duration.ofSeconds(1));
				Connection connection = connect(new RedisClusterConfiguration(
						cluster.nodes().stream().map((node) -> "127.0.0.1:" + node.port()).toList()), TIMEOUT)) {
			RedisServerProcess primary = cluster.master("client").orElseThrow();
			String other = "other";
			for (int i = 0; cluster.master(other).orElseThrow() == primary; i++) {
				other = "other" + i;
			}
			// done once another node serves the client's slot
			throughAFailover(connection.executor(), "cluster", other, primary,
					() -> cluster.master("client").filter((node) -> node != primary).isPresent());
		}
	}

	/**
	 * A Sentinel's primary, with a replica, dies mid-window: once the Sentinel has promoted the replica, Redis
	 * decides the client again within two seconds, and it never gets more than its limit.
	 */
	@Test
	void followsASentinelFailover() {
		if (!RedisServerProcess.isAvailable()) {
			TestRedis.skipOrFail("there is no redis-server on the PATH to start a Sentinel");
		}
		try (LocalRedisSentinel sentinel = LocalRedisSentinel.startWithReplica(Duration.ofSeconds(1));
				Connection connection = connect(new RedisSentinelConfiguration(LocalRedisSentinel.PRIMARY_NAME,
						Set.of("127.0.0.1:" + sentinel.sentinelPort())), TIMEOUT)) {
			int replica = sentinel.replica().port();
			throughAFailover(connection.executor(), "sentinel", null, sentinel.primary(),
					() -> sentinel.primaryPort() == replica);
		}
	}

	/**
	 * Takes 30 of a client's 100 per hour, kills {@code primary} once its replica has every write, and keeps
	 * deciding for the client, and for {@code other} if given, until Redis decides the client again after
	 * {@code failedOver} first said so: within two seconds of that, and never more than 100 allowed in all, by
	 * Redis and by the failure policy. The writes a replica had not received when its primary died are lost to
	 * Redis' asynchronous replication, as the Redis page says, which the test leaves out by waiting for them.
	 */
	private void throughAFailover(RedisScriptExecutor executor, String name, @Nullable String other,
			RedisServerProcess primary, BooleanSupplier failedOver) {
		RateLimitPolicy policy = RateLimitPolicy.of("hour", Algorithm.GCRA, 100, Duration.ofHours(1));
		RedisRateLimitStore store = this.open.track(RedisRateLimitStore.builder(executor)
			.keyPrefix(getClass().getSimpleName() + ":" + name + "-failover:" + RUN + ":")
			.failurePolicy(FailurePolicy.LOCAL)
			.onFailure((policies, cause) -> this.failures.add(cause))
			.build());
		// connections opened, as the starter's warm-up does
		for (int i = 0; i < 100 && !warmedUp(store, policy); i++) {
			assertThat(i).as("warm-up attempts").isLessThan(99);
		}
		RateLimiter limiter = store.limiter(policy);
		int allowed = 0;
		for (int i = 0; i < 30; i++) {
			allowed += limiter.tryAcquire("client") ? 1 : 0;
		}
		assertThat(allowed).isEqualTo(30);
		assertThat(this.failures).isEmpty();
		// a replica still in its first synchronisation acknowledges nothing yet; each WAIT ends within the socket's timeout
		long replicated = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
		while (!primary.command("WAIT", "1", "1000").equals(":1")) {
			assertThat(System.nanoTime() - replicated).as("a replica with every write within 30 s").isNegative();
		}
		primary.kill();
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
		long failedOverAt = 0;
		long decidedAgainAt = 0;
		int byFailurePolicy = 0;
		int allowedByFailurePolicy = 0;
		int otherByFailurePolicy = 0;
		while (decidedAgainAt == 0 && System.nanoTime() - deadline < 0) {
			int before = this.failures.size();
			boolean admitted = limiter.tryAcquire("client");
			allowed += admitted ? 1 : 0;
			boolean byRedis = this.failures.size() == before;
			byFailurePolicy += byRedis ? 0 : 1;
			allowedByFailurePolicy += (admitted && !byRedis) ? 1 : 0;
			if (other != null) {
				int beforeOther = this.failures.size();
				limiter.tryAcquire(other);
				otherByFailurePolicy += (this.failures.size() == beforeOther) ? 0 : 1;
			}
			if (failedOverAt == 0 && failedOver.getAsBoolean()) {
				failedOverAt = System.nanoTime();
			}
			if (failedOverAt != 0 && byRedis) {
				decidedAgainAt = System.nanoTime();
			}
		}
		assertThat(failedOverAt).as("the failover done").isPositive();
		assertThat(decidedAgainAt).as("Redis deciding again").isPositive();
		for (int i = 0; i < 100; i++) {
			allowed += limiter.tryAcquire("client") ? 1 : 0;
		}
		System.out.println(getClass().getSimpleName() + ": after the " + name + " failover, Redis decided again "
				+ TimeUnit.NANOSECONDS.toMillis(decidedAgainAt - failedOverAt) + " ms after it was done; " + allowed
				+ " of 100 allowed; by the failure policy " + byFailurePolicy + " decisions of the client ("
				+ allowedByFailurePolicy + " allowed)"
				+ ((other != null) ? ", " + otherByFailurePolicy + " of a client on a healthy primary" : ""));
		assertThat(Duration.ofNanos(decidedAgainAt - failedOverAt)).as("Redis deciding again after the failover")
			.isLessThanOrEqualTo(Duration.ofSeconds(2));
		assertThat(allowed).as("allowed in all, by Redis and by the failure policy").isLessThanOrEqualTo(100);
		assertThat(otherByFailurePolicy).as("decisions of a client on a healthy primary by the failure policy")
			.isZero();
	}

	private static boolean warmedUp(RedisRateLimitStore store, RateLimitPolicy policy) {
		try {
			store.warmUp()
				.orElseThrow()
				.warmUp(List.of(List.of(policy)))
				.toCompletableFuture()
				.get(5, TimeUnit.SECONDS);
			return true;
		}
		catch (ExecutionException | TimeoutException ex) {
			return false;
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	@Test
	void rejectsCallsAtOnceWhileRedisIsDownRunsNoneOfThemLaterAndIsBackWithinASecond() throws Exception {
		requireRedisServer();
		try (RedisServerProcess server = RedisServerProcess.start();
				Connection connection = connect(standalone(server), TIMEOUT)) {
			RedisScriptExecutor executor = connection.executor();
			until(executor, (outcome) -> outcome.reply() != null);
			server.kill();
			// a call sent on the connection open when Redis died may fail as an ordinary failure
			List<Outcome> noticing = until(executor, Outcome::unreachable);
			assertThat(noticing).hasSizeLessThanOrEqualTo(2)
				.allSatisfy((outcome) -> assertThat(outcome.failure()).isNotNull());
			// long enough for a reconnection delay growing unbounded, as Lettuce's default does, to reach seconds
			List<Outcome> outage = new ArrayList<>();
			long outageEnd = System.nanoTime() + TimeUnit.SECONDS.toNanos(3);
			while (System.nanoTime() - outageEnd < 0 && outage.size() < 1000) {
				outage.add(call(executor, TIMEOUT));
				Thread.sleep(10);
			}
			// none waits for the timeout, and but for the machine's hiccups each fails in well under a millisecond
			assertThat(outage).allSatisfy((outcome) -> {
				assertThat(outcome.unreachable()).as("%s", outcome.failure()).isTrue();
				assertThat(outcome.elapsed()).isLessThan(TIMEOUT);
			});
			assertThat(outage.stream().filter((outcome) -> outcome.elapsed().compareTo(TIMEOUT.dividedBy(10)) < 0))
				.hasSizeGreaterThan(outage.size() * 9 / 10);
			long restarting = System.nanoTime();
			server.restart();
			List<Outcome> recovering = until(executor, (outcome) -> outcome.reply() != null);
			Duration recovery = Duration.ofNanos(System.nanoTime() - restarting);
			System.out.printf("%s: first decision in Redis %d ms after it was started again%n",
					getClass().getSimpleName(), recovery.toMillis());
			assertThat(recovery).isLessThan(Duration.ofSeconds(1));
			assertThat(recovering).allSatisfy(
					(outcome) -> assertThat(outcome.unreachable()).as("%s", outcome.failure()).isTrue());
			// the one call that succeeded found the restarted Redis without its scripts
			assertThat(scriptCalls(server)).isEqualTo(new ScriptCalls(1, 1));
			Thread.sleep(300);
			assertThat(scriptCalls(server)).isEqualTo(new ScriptCalls(1, 1));
		}
	}

	@Test
	void failsTheCallsInFlightWhenRedisDiesAndNeverSendsThemAgain() throws Exception {
		requireRedisServer();
		try (RedisServerProcess server = RedisServerProcess.start();
				Connection connection = connect(standalone(server), PATIENCE)) {
			RedisScriptExecutor executor = connection.executor();
			until(executor, (outcome) -> outcome.reply() != null);
			server.pause();
			// each on a thread of its own, as a blocking client waits on the caller's; on one connection, Lettuce
			// fails the first of them with the reset connection, and must not keep the others for a replay. Jedis
			// opens a connection for the others, whose handshake Redis never answers: those calls are not sent
			List<CompletableFuture<Outcome>> inFlight = new ArrayList<>();
			for (int i = 0; i < 3; i++) {
				inFlight.add(CompletableFuture.supplyAsync(() -> call(executor, PATIENCE)));
			}
			Thread.sleep(200);
			server.kill();
			for (CompletableFuture<Outcome> call : inFlight) {
				Outcome dropped = call.get(PATIENCE.toMillis() * 2, TimeUnit.MILLISECONDS);
				assertThat(dropped.failure()).isNotNull();
				assertThat(dropped.givenUp()).isFalse();
			}
			server.restart();
			until(executor, (outcome) -> outcome.reply() != null);
			assertThat(scriptCalls(server)).isEqualTo(new ScriptCalls(1, 1));
		}
	}

	@Test
	void runsACallSentBeforeRedisHungOnceItResumesAndNeverAgain() throws Exception {
		requireRedisServer();
		try (RedisServerProcess server = RedisServerProcess.start();
				Connection connection = connect(standalone(server), TIMEOUT)) {
			RedisScriptExecutor executor = connection.executor();
			until(executor, (outcome) -> outcome.reply() != null);
			ScriptCalls loaded = scriptCalls(server);
			server.pause();
			Outcome hung;
			try {
				hung = call(executor, TIMEOUT);
			}
			finally {
				server.resume();
			}
			// written to the socket before the caller gave up on it: Lettuce's call cancelled, Jedis' read timed out
			assertThat(hung.reply()).isNull();
			assertThat(hung.failure()).isNotNull().isNotInstanceOf(ScriptNotSentException.class);
			assertThat(hung.elapsed()).isLessThan(TIMEOUT.plusMillis(50));
			ScriptCalls ran = new ScriptCalls(loaded.evalsha() + 1, loaded.eval());
			awaitScriptCalls(server, ran);
			Thread.sleep(300);
			assertThat(scriptCalls(server)).isEqualTo(ran);
			assertThat(call(executor, PATIENCE).reply()).containsExactly(1L);
			assertThat(scriptCalls(server)).isEqualTo(new ScriptCalls(ran.evalsha() + 1, ran.eval()));
		}
	}

	static void requireRedisServer() {
		if (!RedisServerProcess.isAvailable()) {
			TestRedis.skipOrFail("there is no redis-server on the PATH to kill and restart");
		}
	}

	/**
	 * Calls the executor until an outcome matches, a few milliseconds apart, for at most two seconds, and
	 * returns the outcomes before it.
	 */
	static List<Outcome> until(RedisScriptExecutor executor, Predicate<Outcome> done) throws InterruptedException {
		List<Outcome> before = new ArrayList<>();
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
		while (System.nanoTime() - deadline < 0) {
			Outcome outcome = call(executor, Duration.ofSeconds(1));
			if (done.test(outcome)) {
				return before;
			}
			before.add(outcome);
			Thread.sleep(5);
		}
		throw new AssertionError("No call came to the outcome expected in 2 s; the last ones: "
				+ before.subList(Math.max(0, before.size() - 3), before.size()));
	}

	/**
	 * Calls {@link #SCRIPT} and waits for the reply as the store does: at most {@code wait}, then cancelling
	 * the call.
	 */
	static Outcome call(RedisScriptExecutor executor, Duration wait) {
		long start = System.nanoTime();
		CompletableFuture<List<Long>> reply = executor.execute(SHA1, SCRIPT, List.of("key"), List.of())
			.toCompletableFuture();
		try {
			List<Long> values = reply.get(wait.toNanos(), TimeUnit.NANOSECONDS);
			return new Outcome(values, null, false, Duration.ofNanos(System.nanoTime() - start));
		}
		catch (TimeoutException ex) {
			reply.cancel(true);
			return new Outcome(null, ex, true, Duration.ofNanos(System.nanoTime() - start));
		}
		catch (ExecutionException ex) {
			return new Outcome(null, ex.getCause(), false, Duration.ofNanos(System.nanoTime() - start));
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	/** What one call came to, and how long it took. */
	record Outcome(@Nullable List<Long> reply, @Nullable Throwable failure, boolean givenUp, Duration elapsed) {

		boolean unreachable() {
			return this.failure instanceof ScriptNotSentException notSent
					&& notSent.reason() == ScriptNotSentException.Reason.UNREACHABLE;
		}

	}

	/** How many times Redis ran {@code EVALSHA} and {@code EVAL} since it started. */
	record ScriptCalls(long evalsha, long eval) {

	}

	/** Reads {@code INFO commandstats} on a client of its own, which has nothing to replay. */
	static ScriptCalls scriptCalls(RedisServerProcess server) {
		RedisClient client = RedisClient.create(server.uri());
		try (StatefulRedisConnection<String, String> connection = client.connect()) {
			String info = connection.sync().info("commandstats");
			return new ScriptCalls(calls(info, "evalsha"), calls(info, "eval"));
		}
		finally {
			client.shutdown();
		}
	}

	static void awaitScriptCalls(RedisServerProcess server, ScriptCalls expected) throws InterruptedException {
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
		ScriptCalls actual = scriptCalls(server);
		while (!actual.equals(expected) && System.nanoTime() - deadline < 0) {
			Thread.sleep(10);
			actual = scriptCalls(server);
		}
		assertThat(actual).isEqualTo(expected);
	}

	private static long calls(String info, String command) {
		String prefix = "cmdstat_" + command + ":calls=";
		return info.lines()
			.filter((line) -> line.startsWith(prefix))
			.mapToLong((line) -> Long.parseLong(line.substring(prefix.length(), line.indexOf(',', prefix.length()))))
			.findFirst()
			.orElse(0);
	}

	static String sha1(String script) {
		try {
			return HexFormat.of()
				.formatHex(MessageDigest.getInstance("SHA-1").digest(script.getBytes(StandardCharsets.UTF_8)));
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException(ex);
		}
	}

	/** A store that denies whenever Redis does not decide, and records why. */
	RedisRateLimitStore store(RedisScriptExecutor executor, String name) {
		return this.open.track(RedisRateLimitStore.builder(executor)
			.keyPrefix(getClass().getSimpleName() + ":" + name + ":" + RUN + ":")
			.timeout(Duration.ofSeconds(10))
			.failurePolicy(FailurePolicy.DENY)
			.onFailure((policies, cause) -> this.failures.add(cause))
			.build());
	}

	@AfterEach
	void closeStores() {
		this.open.closeAll();
	}

}
