package dev.ratelimit.core.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.UnaryOperator;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.Decision;
import dev.ratelimit.core.FailurePolicy;
import dev.ratelimit.core.KeyedPolicy;
import dev.ratelimit.core.ManualTimeSource;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.RateLimitStore;
import dev.ratelimit.core.StoreContractTests;
import dev.ratelimit.core.testing.AwaitingAsyncStore;
import dev.ratelimit.core.testing.LettuceScriptExecutor;
import dev.ratelimit.core.testing.LocalRedisCluster;
import dev.ratelimit.core.testing.OpenStores;
import dev.ratelimit.core.testing.RedisExtension;
import dev.ratelimit.core.testing.RedisServerProcess;
import dev.ratelimit.core.testing.TestRedis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

/**
 * A real three-master Redis Cluster on loopback ports: keys of many clients, spread over every node, are
 * decided as on a single Redis, stacked ones included, those on several keys and slots too, without a
 * cross-slot error; and the store contract holds on it.
 */
@ExtendWith(RedisExtension.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RedisClusterIT {

	private final OpenStores open = new OpenStores();

	private static final String RUN = Long.toString(ThreadLocalRandom.current().nextLong() >>> 1, 36);

	private @Nullable LocalRedisCluster cluster;

	private @Nullable LettuceScriptExecutor executor;

	private TestRedis single;

	private final AtomicInteger stores = new AtomicInteger();

	private final List<Throwable> failures = new ArrayList<>();

	@BeforeEach
	void startCluster(TestRedis single) {
		this.single = single;
		if (this.cluster == null) {
			if (!LocalRedisCluster.isAvailable()) {
				TestRedis.skipOrFail("there is no redis-server and redis-cli on the PATH to start a cluster");
			}
			this.cluster = LocalRedisCluster.start();
			this.executor = LettuceScriptExecutor.cluster(this.cluster.uris());
		}
	}

	@AfterAll
	void stopCluster() {
		if (this.executor != null) {
			this.executor.close();
		}
		if (this.cluster != null) {
			this.cluster.close();
		}
	}

	@AfterEach
	void closeStores() {
		this.open.closeAll();
	}
	@Nested
	class Contract extends StoreContractTests {

		@Override
		protected RateLimitStore createStore(ManualTimeSource clock) {
			return store(RedisClusterIT.this.executor, clock, "contract:" + RUN + ":" + stores.incrementAndGet() + ":");
		}

		@Override
		protected int concurrencyRepetitions() {
			return 10;
		}

	}

	/** The contract again, every decision made asynchronously: stacks over several slots chained slot by slot. */
	@Nested
	class AsyncContract extends Contract {

		@Override
		protected RateLimitStore createStore(ManualTimeSource clock) {
			return new AwaitingAsyncStore(super.createStore(clock));
		}

	}

	@Test
	void decidesAStackOverSeveralSlotsAsASingleRedisDecidesItInOneCall() {
		decideAStackOverSeveralSlots("across", (store) -> store);
	}

	@Test
	void decidesAStackOverSeveralSlotsAsynchronouslyAsASingleRedisDecidesItInOneCall() {
		decideAStackOverSeveralSlots("across-async", AwaitingAsyncStore::new);
	}

	/** Compares request for request a cluster store, used as {@code onCluster} wraps it, with a single Redis. */
	private void decideAStackOverSeveralSlots(String name, UnaryOperator<RateLimitStore> onCluster) {
		ManualTimeSource clusterClock = new ManualTimeSource();
		ManualTimeSource singleClock = new ManualTimeSource();
		RateLimitStore slotBySlot = onCluster.apply(store(this.executor, clusterClock, name + ":" + RUN + ":"));
		RateLimitStore onSingle = store(this.single.executor(), singleClock, name + "-single:" + RUN + ":");
		RateLimitPolicy perClient = RateLimitPolicy.of("client", Algorithm.SLIDING_LOG, 5, Duration.ofSeconds(10));
		RateLimitPolicy total = RateLimitPolicy.of("total", Algorithm.GCRA, 8, Duration.ofSeconds(10));
		RateLimitPolicy hourly = RateLimitPolicy.of("hourly", Algorithm.FIXED_WINDOW, 60, Duration.ofHours(1));
		Random random = new Random(7);
		long now = 0;
		int allowed = 0;
		int denied = 0;
		for (int i = 0; i < 1500; i++) {
			now += (random.nextInt(4) == 0) ? random.nextInt(2_000_000) : 0;
			clusterClock.set(now * 1000);
			singleClock.set(now * 1000);
			String client = "client-" + random.nextInt(12);
			// the shared key and the clients' keys fall into different slots, on different nodes
			List<KeyedPolicy> stack = List.of(new KeyedPolicy(client, perClient), new KeyedPolicy("all", total),
					new KeyedPolicy(client, hourly));
			List<Decision> expected = onSingle.decideAll(stack);
			List<Decision> actual = slotBySlot.decideAll(stack);
			assertThat(actual).as("request %d of %s", i, client).isEqualTo(expected);
			if (expected.get(0).allowed()) {
				allowed++;
				if (random.nextInt(5) == 0) {
					onSingle.giveBack(stack, expected);
					slotBySlot.giveBack(stack, actual);
				}
			}
			else {
				denied++;
			}
		}
		assertThat(allowed).isPositive();
		assertThat(denied).isPositive();
		assertThat(this.failures).isEmpty();
	}

	@Test
	void decidesKeysOnEverySlotAsASingleRedis() {
		ManualTimeSource clusterClock = new ManualTimeSource();
		ManualTimeSource singleClock = new ManualTimeSource();
		RateLimitStore onCluster = store(this.executor, clusterClock, "cluster:" + RUN + ":");
		RateLimitStore onSingle = store(this.single.executor(), singleClock, "single:" + RUN + ":");
		List<RateLimitPolicy> stack = List.of(RateLimitPolicy.of("second", Algorithm.GCRA, 3, Duration.ofSeconds(1)),
				RateLimitPolicy.of("minute", Algorithm.SLIDING_LOG, 20, Duration.ofMinutes(1)),
				RateLimitPolicy.of("hour", Algorithm.FIXED_WINDOW, 100, Duration.ofHours(1)),
				RateLimitPolicy.of("smooth", Algorithm.LEAKY_BUCKET, 7, Duration.ofSeconds(2)).withDelayAfter(2),
				RateLimitPolicy.of("count", Algorithm.SLIDING_WINDOW_COUNTER, 9, Duration.ofSeconds(3)),
				RateLimitPolicy.of("tokens", Algorithm.TOKEN_BUCKET, 4, Duration.ofSeconds(1)).withBurst(6));
		Random random = new Random(42);
		long now = 0;
		for (int i = 0; i < 3000; i++) {
			now += (random.nextInt(3) == 0) ? random.nextInt(200_000) : 0;
			clusterClock.set(now * 1000);
			singleClock.set(now * 1000);
			// braces in some keys: escaped, they must not move the hash tag
			String key = ((i % 7 == 0) ? "{user}-" : "user-") + random.nextInt(400);
			List<RateLimitPolicy> policies = (random.nextBoolean()) ? stack
					: List.of(stack.get(random.nextInt(stack.size())));
			List<Decision> expected = onSingle.decideAll(key, policies);
			assertThat(onCluster.decideAll(key, policies)).as("request %d, key %s", i, key).isEqualTo(expected);
		}
		assertThat(this.failures).isEmpty();
		for (RedisServerProcess node : this.cluster.nodes()) {
			assertThat(Long.parseLong(node.command("DBSIZE").substring(1))).as("keys on port %d", node.port())
				.isPositive();
		}
	}

	@Test
	void sendsAStackAgainWhileItsSlotMovesToAnotherNodeRatherThanTakingTheFailurePolicy() {
		List<RateLimitPolicy> stack = List.of(RateLimitPolicy.of("minute", Algorithm.GCRA, 5, Duration.ofMinutes(1)),
				RateLimitPolicy.of("hour", Algorithm.FIXED_WINDOW, 5, Duration.ofHours(1)));
		String prefix = "moving:" + RUN + ":";
		String client = "mover";
		int slot = RedisKeys.slot(RedisKeys.escape(client));
		List<String> keys = stack.stream().map((policy) -> prefix + "{" + client + "}:" + policy.name()).toList();
		RateLimitStore first = store(this.executor, new ManualTimeSource(), prefix);
		assertThat(first.decideAll(client, stack)).allMatch(Decision::allowed);
		RedisServerProcess source = owner(slot);
		RedisServerProcess target = this.cluster.nodes().stream().filter((node) -> node != source).findFirst()
			.orElseThrow();
		AtomicInteger triedAgain = new AtomicInteger();
		// the migration ends when the store is first told to try again, before it sends the call again
		RedisScriptExecutor moving = (sha1, script, callKeys, args) -> this.executor.execute(sha1, script, callKeys,
				args).whenComplete((reply, ex) -> {
					if (ex != null && String.valueOf(ex.getMessage()).contains("TRYAGAIN")
							&& triedAgain.getAndIncrement() == 0) {
						source.command("MIGRATE", "127.0.0.1", Integer.toString(target.port()), keys.get(1), "0",
								"5000");
						for (RedisServerProcess node : this.cluster.nodes()) {
							node.command("CLUSTER", "SETSLOT", Integer.toString(slot), "NODE", target.bulk("CLUSTER",
									"MYID"));
						}
					}
				});
		RateLimitStore store = store(moving, new ManualTimeSource(), prefix, true);
		// half moved: one key on each node, so that a call for both is to be sent again
		target.command("CLUSTER", "SETSLOT", Integer.toString(slot), "IMPORTING", source.bulk("CLUSTER", "MYID"));
		source.command("CLUSTER", "SETSLOT", Integer.toString(slot), "MIGRATING", target.bulk("CLUSTER", "MYID"));
		assertThat(source.command("MIGRATE", "127.0.0.1", Integer.toString(target.port()), keys.get(0), "0", "5000"))
			.isEqualTo("+OK");
		List<Decision> moved = store.decideAll(client, stack);
		assertThat(triedAgain).as("calls the Cluster answered TRYAGAIN").hasValue(1);
		assertThat(moved).extracting(Decision::allowed, Decision::remaining)
			.containsExactly(tuple(true, 3L), tuple(true, 3L));
		assertThat(this.failures).isEmpty();
		assertThat(owner(slot)).isSameAs(target);
	}

	@Test
	void resetsEveryClientOnEveryPrimary() {
		String prefix = "reset-all:" + RUN + ":";
		RateLimitStore store = store(this.executor, new ManualTimeSource(), prefix);
		RateLimitPolicy hourly = RateLimitPolicy.of("api", Algorithm.GCRA, 1, Duration.ofHours(1));
		for (int i = 0; i < 60; i++) {
			store.decideAll("client-" + i, List.of(hourly));
		}
		for (RedisServerProcess node : this.cluster.nodes()) {
			assertThat(states(node, prefix)).as("states on port %d", node.port()).isPositive();
		}
		store.resetAll().orElseThrow().resetAll();
		for (RedisServerProcess node : this.cluster.nodes()) {
			assertThat(states(node, prefix)).as("states on port %d", node.port()).isZero();
		}
		for (int i = 0; i < 60; i++) {
			assertThat(store.decideAll("client-" + i, List.of(hourly)).get(0).allowed()).as("client %d", i).isTrue();
		}
		assertThat(this.failures).isEmpty();
	}

	/** How many states of the clients of {@code prefix} the node holds, without the marks beside them. */
	private static long states(RedisServerProcess node, String prefix) {
		String count = node.command("EVAL", "local n = 0 for _, key in ipairs(redis.call('KEYS', ARGV[1])) do "
				+ "if not key:find('!', 1, true) then n = n + 1 end end return n", "0", prefix + "{client-*");
		return Long.parseLong(count.substring(1));
	}

	/** The node that holds the keys of a slot. */
	private RedisServerProcess owner(int slot) {
		return this.cluster.nodes().stream()
			.filter((node) -> !node.command("CLUSTER", "COUNTKEYSINSLOT", Integer.toString(slot)).equals(":0"))
			.findFirst()
			.orElseThrow();
	}

	private RateLimitStore store(RedisScriptExecutor executor, ManualTimeSource clock, String prefix) {
		return store(executor, clock, prefix, executor == this.executor);
	}

	private RateLimitStore store(RedisScriptExecutor executor, ManualTimeSource clock, String prefix,
			boolean cluster) {
		return this.open.track(RedisRateLimitStore.builder(executor)
			.keyPrefix(prefix)
			.timeSource(clock)
			.timeout(Duration.ofSeconds(10))
			.failurePolicy(FailurePolicy.DENY)
			.cluster(cluster)
			.onFailure((policies, cause) -> this.failures.add(cause))
			.build());
	}

}
