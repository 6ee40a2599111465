package dev.ratelimit.core.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;

import dev.ratelimit.core.ManualTimeSource;
import dev.ratelimit.core.RateLimitStore;
import dev.ratelimit.core.RateLimitStore.InFlight.Permit;
import dev.ratelimit.core.testing.InFlightStress;
import dev.ratelimit.core.testing.LettuceScriptExecutor;
import dev.ratelimit.core.testing.OpenStores;
import dev.ratelimit.core.testing.RedisExtension;
import dev.ratelimit.core.testing.TestRedis;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Requests in flight across a fleet on one real Redis, each store on a Lettuce client of its own: the leases of
 * an instance that dies expire within their life, those of a request that runs long are renewed, and three
 * instances together never hold more than the limit.
 */
@ExtendWith(RedisExtension.class)
class RedisInFlightIT {

	private static final String RUN = Long.toString(ThreadLocalRandom.current().nextLong() >>> 1, 36);

	private static final Duration LEASE = Duration.ofSeconds(30);

	private final OpenStores stores = new OpenStores();

	private final List<LettuceScriptExecutor> clients = new ArrayList<>();

	private final ManualTimeSource clock = new ManualTimeSource();

	@AfterEach
	void close() {
		this.stores.closeAll();
		this.clients.forEach(LettuceScriptExecutor::close);
	}

	@Test
	void expiresTheLeasesOfAnInstanceThatDiedHoldingThem(TestRedis redis) {
		RedisRateLimitStore dead = store(redis, "dead");
		assertThat(acquire(dead, 2).granted()).isTrue();
		assertThat(acquire(dead, 2).granted()).isTrue();
		// it stops renewing and never releases
		dead.close();
		RedisRateLimitStore alive = store(redis, "dead");
		assertThat(acquire(alive, 2).granted()).isFalse();
		this.clock.advance(LEASE.minusNanos(1000));
		assertThat(acquire(alive, 2).granted()).as("a microsecond before the lease ends").isFalse();
		this.clock.advance(Duration.ofNanos(1000));
		Permit again = acquire(alive, 2);
		assertThat(again.granted()).isTrue();
		assertThat(again.held()).as("both leases expired").isOne();
	}

	@Test
	void keepsTheLeaseOfARequestThatRunsLong(TestRedis redis) {
		RedisRateLimitStore running = store(redis, "long");
		RedisRateLimitStore other = store(redis, "long");
		assertThat(acquire(running, 1).granted()).isTrue();
		for (int i = 0; i < 4; i++) {
			this.clock.advance(LEASE.dividedBy(3));
			// a renewal and the other instance's call travel on connections of their own: wait for the renewal
			running.inFlightLeases().renewAll().join();
			assertThat(acquire(other, 1).granted()).as("renewed %d times", i + 1).isFalse();
		}
		running.close();
		this.clock.advance(LEASE);
		assertThat(acquire(other, 1).granted()).isTrue();
	}

	@Test
	void neverHoldsMoreThanTheLimitAcrossTheFleet(TestRedis redis) throws Exception {
		List<RedisRateLimitStore> fleet = List.of(store(redis, "fleet"), store(redis, "fleet"), store(redis, "fleet"));
		assertThat(InFlightStress.mostHeldAtOnce(fleet.stream().map((store) -> store.inFlight().orElseThrow()).toList(),
				30, 50, 4))
			.as("requests in flight at once")
			.isBetween(1, 4);
	}

	private RedisRateLimitStore store(TestRedis redis, String name) {
		LettuceScriptExecutor client = LettuceScriptExecutor.standalone(redis.uri());
		this.clients.add(client);
		return this.stores.track(RedisRateLimitStore.builder(client)
			.keyPrefix("in-flight:" + RUN + ":" + name + ":")
			.timeSource(this.clock)
			.timeout(Duration.ofSeconds(5))
			.inFlightLease(LEASE)
			.build());
	}

	private static Permit acquire(RateLimitStore store, long limit) {
		return store.inFlight().orElseThrow().acquire("report", "client", limit).toCompletableFuture().join();
	}

}
