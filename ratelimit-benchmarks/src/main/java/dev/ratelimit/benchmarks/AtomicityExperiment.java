package dev.ratelimit.benchmarks;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.lettuce.core.api.sync.RedisCommands;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.FailurePolicy;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.RateLimiter;
import dev.ratelimit.core.redis.RedisRateLimitStore;
import dev.ratelimit.core.redis.RedisScriptExecutor;

/**
 * The article's concurrency experiment: 50 threads send 4 requests each, all released at once, to one token
 * bucket of capacity 10 in Redis. The Lua script, one atomic call per request, lets exactly 10 through; a
 * client that reads the bucket (HGETALL), computes in Java and writes it back (HSET) lets far more through,
 * whether or not it pauses a millisecond between read and write.
 * <p>
 * Arguments: the Redis URI (default {@code redis://127.0.0.1:6379}) and the number of runs (default 5). It
 * writes only keys under {@code atomicity-experiment:} and deletes them when done.
 */
public final class AtomicityExperiment {

	private static final int THREADS = 50;

	private static final int CALLS_PER_THREAD = 4;

	private static final int CAPACITY = 10;

	/** Tokens per second: the article's capacity of 10 refilled at one per second. */
	private static final double RATE = 1.0;

	private static final String USAGE = """
			usage: AtomicityExperiment [REDIS_URI [RUNS]]
			  REDIS_URI   the Redis to run against (redis://127.0.0.1:6379)
			  RUNS        how many times to run each client (5)
			  --help, -h  this text
			It writes only keys under atomicity-experiment: and deletes them when done.""";

	private AtomicityExperiment() {
	}

	private static int runs(String text) {
		try {
			int runs = Integer.parseInt(text);
			if (runs >= 1) {
				return runs;
			}
		}
		catch (NumberFormatException ex) {
			// reported below
		}
		throw new IllegalArgumentException("RUNS must be a whole number of at least 1, was '" + text + "'");
	}

	public static void main(String[] args) throws Exception {
		CommandLine.helpIfAsked(args, USAGE);
		String uri = (args.length > 0) ? args[0] : "redis://127.0.0.1:6379";
		int runs = 5;
		try {
			if (args.length > 2) {
				throw new IllegalArgumentException("at most two arguments, was " + args.length);
			}
			runs = (args.length > 1) ? runs(args[1]) : runs;
		}
		catch (IllegalArgumentException ex) {
			CommandLine.fail(ex, USAGE);
		}
		String prefix = "atomicity-experiment:" + Long.toString(ThreadLocalRandom.current().nextLong() >>> 1, 36)
				+ ":";
		RedisClient client = RedisClient.create(uri);
		ExecutorService threads = Executors.newFixedThreadPool(THREADS);
		try (StatefulRedisConnection<String, String> connection = client.connect()) {
			RedisCommands<String, String> redis = connection.sync();
			RateLimiter lua = RedisRateLimitStore.builder(lettuce(connection.async()))
				.keyPrefix(prefix)
				.timeout(Duration.ofSeconds(10))
				.failurePolicy(FailurePolicy.DENY)
				.build()
				.limiter(RateLimitPolicy.of("bucket", Algorithm.TOKEN_BUCKET, CAPACITY, Duration.ofSeconds(10)));

			System.out.printf("%d requests (%d threads x %d calls, released at once) against a token bucket of "
					+ "capacity %d refilled at 1/s, Redis %s at %s%n%n", THREADS * CALLS_PER_THREAD, THREADS,
					CALLS_PER_THREAD, CAPACITY, version(redis), uri);
			StringBuilder header = new StringBuilder(String.format("%-40s", "allowed of 200"));
			for (int run = 1; run <= runs; run++) {
				header.append(String.format("%7s", "run " + run));
			}
			System.out.println(header);
			row("Lua script (one EVALSHA per request)", runs, threads,
					(run) -> (key) -> lua.tryAcquire(run + "-" + key));
			row("HGETALL, compute in Java, HSET", runs, threads,
					(run) -> (key) -> readComputeWrite(redis, prefix + "plain:" + run + ":" + key, 0));
			row("the same, 1 ms between read and write", runs, threads,
					(run) -> (key) -> readComputeWrite(redis, prefix + "pause:" + run + ":" + key, 1));
			List<String> keys = redis.keys(prefix + "*");
			if (!keys.isEmpty()) {
				redis.del(keys.toArray(String[]::new));
			}
		}
		finally {
			threads.shutdownNow();
			client.shutdown();
		}
	}

	/** The store's script port on plain Lettuce: EVALSHA, then EVAL when Redis does not know the script. */
	@SuppressWarnings("unchecked")
	private static RedisScriptExecutor lettuce(RedisAsyncCommands<String, String> redis) {
		return (sha1, script, keys, args) -> {
			String[] keyArray = keys.toArray(String[]::new);
			String[] argArray = args.toArray(String[]::new);
			RedisFuture<List<Object>> reply = redis.evalsha(sha1, ScriptOutputType.MULTI, keyArray, argArray);
			return reply.exceptionallyCompose((ex) -> (ex instanceof RedisNoScriptException
					|| ex.getCause() instanceof RedisNoScriptException)
							? redis.<List<Object>>eval(script, ScriptOutputType.MULTI, keyArray, argArray)
							: CompletableFuture.failedFuture(ex))
				.thenApply((values) -> (List<Long>) (List<?>) values);
		};
	}

	/** The non-atomic token bucket: another client may write between this one's read and its write. */
	private static boolean readComputeWrite(RedisCommands<String, String> redis, String key, long pauseMillis)
			throws InterruptedException {
		Map<String, String> state = redis.hgetall(key);
		double now = System.currentTimeMillis() / 1000.0;
		double tokens = state.isEmpty() ? CAPACITY : Double.parseDouble(state.get("tokens"));
		double updated = state.isEmpty() ? now : Double.parseDouble(state.get("ts"));
		tokens = Math.min(CAPACITY, tokens + (now - updated) * RATE);
		boolean allowed = tokens >= 1;
		if (allowed) {
			tokens -= 1;
		}
		if (pauseMillis > 0) {
			Thread.sleep(pauseMillis);
		}
		redis.hset(key, Map.of("tokens", Double.toString(tokens), "ts", Double.toString(now)));
		redis.expire(key, 60);
		return allowed;
	}

	private static void row(String name, int runs, ExecutorService threads, Run variant) throws Exception {
		StringBuilder row = new StringBuilder(String.format("%-40s", name));
		for (int run = 1; run <= runs; run++) {
			row.append(String.format("%7d", race(threads, variant.request(run))));
		}
		System.out.println(row);
	}

	/** Releases every thread at once and counts the allowed requests. */
	private static int race(ExecutorService threads, Request request) throws Exception {
		CountDownLatch start = new CountDownLatch(1);
		List<Future<Integer>> results = new ArrayList<>();
		for (int thread = 0; thread < THREADS; thread++) {
			results.add(threads.submit(() -> {
				start.await();
				int allowed = 0;
				for (int call = 0; call < CALLS_PER_THREAD; call++) {
					allowed += request.allowed("bucket") ? 1 : 0;
				}
				return allowed;
			}));
		}
		start.countDown();
		int allowed = 0;
		for (Future<Integer> result : results) {
			allowed += result.get(60, TimeUnit.SECONDS);
		}
		return allowed;
	}

	private static String version(RedisCommands<String, String> redis) {
		for (String line : redis.info("server").split("\r\n")) {
			if (line.startsWith("redis_version:")) {
				return line.substring("redis_version:".length());
			}
		}
		return "(unknown version)";
	}

	@FunctionalInterface
	private interface Request {

		boolean allowed(String key) throws Exception;

	}

	@FunctionalInterface
	private interface Run {

		Request request(int run);

	}

}
