package dev.ratelimit.core.jdbc;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import dev.ratelimit.core.ManualTimeSource;
import dev.ratelimit.core.RateLimitStore;
import dev.ratelimit.core.RateLimitStore.InFlight.Permit;
import dev.ratelimit.core.testing.InFlightStress;
import dev.ratelimit.core.testing.PostgresExtension;
import dev.ratelimit.core.testing.TestPostgres;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Requests in flight across a fleet on one real PostgreSQL, each store on a pool of its own: the leases of an
 * instance that dies expire within their life, those of a request that runs long are renewed, three instances
 * together never hold more than the limit, and expired leases are deleted with the idle rows.
 */
@ExtendWith(PostgresExtension.class)
class JdbcInFlightIT {

	private static final String RUN = Long.toString(ThreadLocalRandom.current().nextLong() >>> 1, 36);

	private static final String TABLE = "in_flight_state";

	private static final Duration LEASE = Duration.ofSeconds(30);

	private final List<JdbcRateLimitStore> stores = new ArrayList<>();

	private final ManualTimeSource clock = new ManualTimeSource();

	private TestPostgres postgres;

	@BeforeEach
	void usePostgres(TestPostgres postgres) {
		this.postgres = postgres;
	}

	@AfterEach
	void close() {
		this.stores.forEach(JdbcRateLimitStore::close);
	}

	@Test
	void expiresTheLeasesOfAnInstanceThatDiedHoldingThemAndDeletesThemWithTheIdleRows() {
		JdbcRateLimitStore dead = store("dead");
		assertThat(acquire(dead, 2).granted()).isTrue();
		assertThat(acquire(dead, 2).granted()).isTrue();
		// it stops renewing and never releases
		dead.close();
		JdbcRateLimitStore alive = store("dead");
		assertThat(acquire(alive, 2).granted()).isFalse();
		this.clock.advance(LEASE.minusNanos(1000));
		assertThat(acquire(alive, 2).granted()).as("a microsecond before the lease ends").isFalse();
		assertThat(alive.deleteExpired(100)).as("leases still held").isZero();
		this.clock.advance(Duration.ofNanos(1000));
		assertThat(alive.deleteExpired(100)).as("the expired leases").isEqualTo(2);
		Permit again = acquire(alive, 2);
		assertThat(again.granted()).isTrue();
		assertThat(again.held()).as("both leases expired").isOne();
	}

	@Test
	void keepsTheLeaseOfARequestThatRunsLong() throws Exception {
		JdbcRateLimitStore running = store("long");
		JdbcRateLimitStore other = store("long");
		assertThat(acquire(running, 1).granted()).isTrue();
		for (int i = 0; i < 4; i++) {
			this.clock.advance(LEASE.dividedBy(3));
			assertThat(running.inFlightLeases().renewAll()).as("leases renewed").isOne();
			assertThat(acquire(other, 1).granted()).as("renewed %d times", i + 1).isFalse();
		}
		running.close();
		this.clock.advance(LEASE);
		assertThat(acquire(other, 1).granted()).isTrue();
	}

	@Test
	void givesAReleasedPermitBackToTheWholeFleet() {
		JdbcRateLimitStore one = store("released");
		JdbcRateLimitStore other = store("released");
		Permit permit = acquire(one, 1);
		assertThat(acquire(other, 1).granted()).isFalse();
		permit.release();
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
		// the release does not block its caller: the other instance may ask before it reached the database
		while (!acquire(other, 1).granted()) {
			assertThat(System.nanoTime() - deadline).as("the permit is back").isNegative();
		}
	}

	@Test
	void neverHoldsMoreThanTheLimitAcrossTheFleet() throws Exception {
		List<JdbcRateLimitStore> fleet = List.of(store("fleet"), store("fleet"), store("fleet"));
		assertThat(InFlightStress.mostHeldAtOnce(fleet.stream().map((store) -> store.inFlight().orElseThrow()).toList(),
				30, 10, 4))
			.as("requests in flight at once")
			.isBetween(1, 4);
		assertThat(fleet.get(0).failures().orElseThrow().status().decisions()).as("decided by the failure policy")
			.isZero();
	}

	private JdbcRateLimitStore store(String name) {
		JdbcRateLimitStore store = TestStores.builder(this.postgres.dataSource(), TABLE)
			.keyPrefix("in-flight:" + RUN + ":" + name + ":")
			.timeSource(this.clock)
			.inFlightLease(LEASE)
			.build();
		this.stores.add(store);
		return store;
	}

	private static Permit acquire(RateLimitStore store, long limit) {
		return store.inFlight().orElseThrow().acquire("report", "client", limit).toCompletableFuture().join();
	}

}
