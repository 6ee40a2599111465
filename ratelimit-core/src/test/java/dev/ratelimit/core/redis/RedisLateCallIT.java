package dev.ratelimit.core.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import io.lettuce.core.api.sync.RedisCommands;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.Decision;
import dev.ratelimit.core.FailurePolicy;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.memory.InMemoryRateLimitStore;
import dev.ratelimit.core.testing.RedisExtension;
import dev.ratelimit.core.testing.RunQueueWait;
import dev.ratelimit.core.testing.TestRedis;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A Redis paused with {@code CLIENT PAUSE WRITE} past the store's timeout runs the held calls once the pause
 * ends: the scripts, past their deadline, take nothing, so the client the failure policy already decided is not
 * charged a second time.
 */
@ExtendWith(RedisExtension.class)
class RedisLateCallIT {

	private static final Duration TIMEOUT = Duration.ofMillis(100);

	private static final Duration PAUSE = Duration.ofMillis(600);

	/** What loading the classes of the failure path may add to the first decision it takes in a JVM. */
	private static final Duration COLD_SLACK = Duration.ofMillis(250);

	private static boolean coldPathTaken;

	private TestRedis redis;

	private RedisCommands<String, String> commands;

	private final String prefix = "late-" + UUID.randomUUID() + ":";

	private final List<Throwable> failures = new CopyOnWriteArrayList<>();

	@BeforeEach
	void useRedis(TestRedis redis) {
		this.redis = redis;
		this.commands = redis.commands();
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void takesNothingForACallRedisRunsAfterTheStoreGaveUpOnIt(Algorithm algorithm) throws Exception {
		RateLimitPolicy policy = RateLimitPolicy.of("api", algorithm, 5, Duration.ofMinutes(1));
		RateLimitPolicy other = RateLimitPolicy.of("other", algorithm, 5, Duration.ofMinutes(1));
		try (RedisRateLimitStore store = RedisRateLimitStore.builder(this.redis.executor())
			.keyPrefix(this.prefix)
			.timeout(TIMEOUT)
			.maxWait(TIMEOUT)
			.failurePolicy(FailurePolicy.DENY)
			.onFailure((policies, cause) -> this.failures.add(cause))
			.build()) {
			store.warmUp()
				.orElseThrow()
				.warmUp(List.of(List.of(policy), List.of(policy, other)))
				.toCompletableFuture()
				.get(5, TimeUnit.SECONDS);
			long evalsBefore = scriptCalls();
			this.commands.clientPause(PAUSE.toMillis());
			// each wait less the time the thread then waited for a CPU: what the store made it wait
			long start = System.nanoTime();
			long queued = RunQueueWait.nanos();
			Decision alone = store.limiter(policy).decide("client");
			long waitedAlone = System.nanoTime() - start - (RunQueueWait.nanos() - queued);
			start = System.nanoTime();
			queued = RunQueueWait.nanos();
			List<Decision> stacked = store.decideAll("client", List.of(policy, other));
			long waitedStacked = System.nanoTime() - start - (RunQueueWait.nanos() - queued);

			assertThat(alone.allowed()).isFalse();
			assertThat(stacked).allSatisfy((decision) -> assertThat(decision.allowed()).isFalse());
			assertThat(this.failures).hasSize(2);
			// each waited the timeout, no longer; the JVM's first failed decision also loads the failure path
			Duration slack = (coldPathTaken) ? Duration.ofMillis(50) : COLD_SLACK;
			coldPathTaken = true;
			assertThat(Duration.ofNanos(waitedAlone)).isLessThan(TIMEOUT.plus(slack));
			assertThat(Duration.ofNanos(waitedStacked)).isLessThan(TIMEOUT.plusMillis(50));
			// once the pause is over, Redis runs both held calls; neither writes a key
			awaitScriptCalls(evalsBefore + 2);
			assertThat(this.commands.keys(this.prefix + "{client}*")).isEmpty();
			// the client's first request in Redis finds a full quota, as a fresh key does
			Decision fresh = InMemoryRateLimitStore.builder().build().limiter(policy).decide("client");
			assertThat(store.limiter(policy).decide("client")).satisfies((decision) -> {
				assertThat(decision.allowed()).isTrue();
				assertThat(decision.remaining()).isEqualTo(fresh.remaining());
			});
		}
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void decidesByRedisThroughAPauseShorterThanTheMaximumWait(Algorithm algorithm) throws Exception {
		RateLimitPolicy policy = RateLimitPolicy.of("api", algorithm, 5, Duration.ofMinutes(1));
		try (RedisRateLimitStore store = RedisRateLimitStore.builder(this.redis.executor())
			.keyPrefix(this.prefix)
			.timeout(TIMEOUT)
			.maxWait(PAUSE.plus(PAUSE))
			.failurePolicy(FailurePolicy.DENY)
			.onFailure((policies, cause) -> this.failures.add(cause))
			.build()) {
			store.warmUp()
				.orElseThrow()
				.warmUp(List.of(List.of(policy)))
				.toCompletableFuture()
				.get(5, TimeUnit.SECONDS);
			this.commands.clientPause(PAUSE.toMillis());
			long start = System.nanoTime();
			Decision decision = store.limiter(policy).decide("client");
			// later than the timeout, within the wait: Redis' own decision, not the failure policy's denial
			assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThan(TIMEOUT);
			assertThat(decision.allowed()).isTrue();
			assertThat(decision.remaining())
				.isEqualTo(InMemoryRateLimitStore.builder().build().limiter(policy).decide("client").remaining());
			assertThat(this.failures).isEmpty();
		}
	}

	private long scriptCalls() {
		Map<String, Long> calls = new HashMap<>();
		for (String line : this.commands.info("commandstats").split("\r?\n")) {
			if (line.startsWith("cmdstat_evalsha:") || line.startsWith("cmdstat_eval:")) {
				String stats = line.substring(line.indexOf(':') + 1);
				for (String field : stats.split(",")) {
					if (field.startsWith("calls=")) {
						calls.put(line.substring(0, line.indexOf(':')), Long.parseLong(field.substring(6)));
					}
				}
			}
		}
		return calls.values().stream().mapToLong(Long::longValue).sum();
	}

	private void awaitScriptCalls(long count) throws InterruptedException {
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
		List<Long> seen = new ArrayList<>();
		while (System.nanoTime() < deadline) {
			long calls = scriptCalls();
			seen.add(calls);
			if (calls >= count) {
				return;
			}
			Thread.sleep(20);
		}
		throw new AssertionError("Redis never ran the held calls: script calls seen " + seen);
	}

}
