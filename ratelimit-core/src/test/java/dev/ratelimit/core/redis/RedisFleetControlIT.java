package dev.ratelimit.core.redis;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.FailurePolicy;
import dev.ratelimit.core.ManualTimeSource;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.RateLimitStore;
import dev.ratelimit.core.testing.FailLoudly;
import dev.ratelimit.core.testing.ManualScheduler;
import dev.ratelimit.core.testing.OpenStores;
import dev.ratelimit.core.testing.RedisExtension;
import dev.ratelimit.core.testing.TestRedis;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the instances of a fleet share besides the clients' states, on a real Redis: runtime changes, which
 * every instance hears of at its next heartbeat and an instance that starts later reads, and resets, after
 * which every instance drops the denials it keeps locally at its next heartbeat. Each instance's heartbeat runs
 * on a manual scheduler, so that the test says when it beats.
 */
@ExtendWith(RedisExtension.class)
class RedisFleetControlIT {

	private static final RateLimitPolicy API = RateLimitPolicy.of("api", Algorithm.GCRA, 2, Duration.ofSeconds(10));

	private final String prefix = "control:" + Long.toString(ThreadLocalRandom.current().nextLong() >>> 1, 36) + ":";

	private final OpenStores stores = new OpenStores();

	private TestRedis redis;

	@BeforeEach
	void useRedis(TestRedis redis) {
		this.redis = redis;
	}

	@AfterEach
	void closeStores() {
		this.stores.closeAll();
	}

	@Test
	void sharesAChangeWithEveryInstanceAtItsNextHeartbeatAndWithInstancesThatStartLater() {
		ManualScheduler beats = new ManualScheduler(new ManualTimeSource());
		RedisRateLimitStore first = store(new ManualScheduler(new ManualTimeSource()));
		RedisRateLimitStore second = store(beats);
		AtomicInteger told = new AtomicInteger();
		second.sharedChanges().orElseThrow().onChange(told::incrementAndGet);
		second.limiter(API).decide("client");
		assertThat(beats.runNext()).isEqualTo(1);
		assertThat(told).as("told at the first heartbeat, to read what was shared before it started").hasValue(1);
		RateLimitStore.SharedChange lowered = new RateLimitStore.SharedChange(1, Duration.ofSeconds(5), 1);
		first.sharedChanges().orElseThrow().share("api", lowered);
		assertThat(told).hasValue(1);
		beats.runNext();
		assertThat(told).hasValue(2);
		assertThat(second.sharedChanges().orElseThrow().read(List.of("api", "web"))).isEqualTo(Map.of("api", lowered));
		beats.runNext();
		assertThat(told).as("not told again while nothing changed").hasValue(2);
		assertThat(store(new ManualScheduler(new ManualTimeSource())).sharedChanges()
			.orElseThrow()
			.read(List.of("api")))
			.as("an instance that starts later").isEqualTo(Map.of("api", lowered));
		first.sharedChanges().orElseThrow().share("api", null);
		beats.runNext();
		assertThat(told).hasValue(3);
		assertThat(second.sharedChanges().orElseThrow().read(List.of("api"))).isEmpty();
	}

	@Test
	void dropsTheDenialsEveryInstanceKeepsLocallyAtItsNextHeartbeatAfterAReset() {
		ManualScheduler beats = new ManualScheduler(new ManualTimeSource());
		RedisRateLimitStore first = store(new ManualScheduler(new ManualTimeSource()));
		CountingExecutor calls = new CountingExecutor(this.redis.executor());
		RedisRateLimitStore second = this.stores.track(builder(calls, beats).build());
		assertThat(second.limiter(API).decide("client").allowed()).isTrue();
		beats.runNext();
		assertThat(second.limiter(API).decide("client").allowed()).isTrue();
		assertThat(second.limiter(API).decide("client").allowed()).isFalse();
		long before = calls.calls();
		assertThat(second.limiter(API).decide("client").allowed()).as("denied again locally").isFalse();
		assertThat(calls.calls()).isEqualTo(before);
		first.reset("client", API);
		assertThat(first.limiter(API).decide("other").allowed()).isTrue();
		assertThat(second.limiter(API).decide("client").allowed())
			.as("until its next heartbeat, an instance keeps the denial it holds").isFalse();
		beats.runNext();
		assertThat(second.limiter(API).decide("client").allowed()).as("after it").isTrue();
	}

	@Test
	void writesBackTheChangesItKnowsWhenRedisLosesThemAndRevertsOneOnlyWhenItIsRemoved() {
		List<ManualScheduler> beats = List.of(new ManualScheduler(new ManualTimeSource()),
				new ManualScheduler(new ManualTimeSource()), new ManualScheduler(new ManualTimeSource()));
		List<RedisRateLimitStore> fleet = beats.stream().map(this::store).toList();
		RateLimitStore.SharedChange lowered = new RateLimitStore.SharedChange(1, Duration.ofSeconds(5), 1);
		fleet.get(0).sharedChanges().orElseThrow().share("api", lowered);
		for (int i = 0; i < fleet.size(); i++) {
			fleet.get(i).limiter(API).decide("client");
			beats.get(i).runNext();
			assertThat(fleet.get(i).sharedChanges().orElseThrow().read(List.of("api"))).containsEntry("api", lowered);
		}
		String control = new RedisKeys(this.prefix).control();
		// an empty restart, a flush, an eviction or a failover to a replica that missed the change
		assertThat(this.redis.commands().del(control)).isOne();
		beats.get(1).runNext();
		assertThat(this.redis.commands().hget(control, "policy:api")).as("written back at the next heartbeat")
			.isEqualTo("1 5000000 1");
		for (int i = 0; i < fleet.size(); i++) {
			beats.get(i).runNext();
			assertThat(fleet.get(i).sharedChanges().orElseThrow().read(List.of("api"))).containsEntry("api", lowered);
		}
		fleet.get(2).sharedChanges().orElseThrow().share("api", null);
		for (int i = 0; i < fleet.size(); i++) {
			beats.get(i).runNext();
			assertThat(fleet.get(i).sharedChanges().orElseThrow().read(List.of("api"))).isEmpty();
		}
	}

	@Test
	void writesBackTheChangesItKnowsBeforeItChangesOneOrReadsThemOnceRedisLostThem() {
		RateLimitStore.SharedChanges first = store(new ManualScheduler(new ManualTimeSource())).sharedChanges()
			.orElseThrow();
		RateLimitStore.SharedChanges second = store(new ManualScheduler(new ManualTimeSource())).sharedChanges()
			.orElseThrow();
		RateLimitStore.SharedChange lowered = new RateLimitStore.SharedChange(1, Duration.ofSeconds(5), 1);
		RateLimitStore.SharedChange raised = new RateLimitStore.SharedChange(9, Duration.ofSeconds(5), 9);
		first.share("api", lowered);
		assertThat(second.read(List.of("api"))).containsEntry("api", lowered);
		this.redis.commands().del(new RedisKeys(this.prefix).control());
		first.share("web", raised);
		assertThat(first.read(List.of("api", "web"))).isEqualTo(Map.of("api", lowered, "web", raised));
		this.redis.commands().del(new RedisKeys(this.prefix).control());
		assertThat(second.read(List.of("api", "web"))).as("the second knew of api, not yet of web")
			.isEqualTo(Map.of("api", lowered));
	}

	private RedisRateLimitStore store(ManualScheduler scheduler) {
		return this.stores.track(builder(this.redis.executor(), scheduler).build());
	}

	private RedisRateLimitStore.Builder builder(RedisScriptExecutor executor, ManualScheduler scheduler) {
		return RedisRateLimitStore.builder(executor)
			.keyPrefix(this.prefix)
			.scheduler(scheduler)
			.timeout(Duration.ofSeconds(10))
			.failurePolicy(FailurePolicy.DENY)
			.onFailure(FailLoudly.ON_REDIS_FAILURE);
	}

}
