package dev.ratelimit.core.jdbc;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.Decision;
import dev.ratelimit.core.FailurePolicy;
import dev.ratelimit.core.FailureStatus;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.RateLimitStore;
import dev.ratelimit.core.internal.FailureLog;
import dev.ratelimit.core.testing.LogRecorder;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Each way PostgreSQL fails a store, under each failure policy, on a cluster of this class's own: the server
 * stopped, its processes frozen ({@code SIGSTOP}), a statement stuck behind a lock, a pool with no connection free, and
 * a database that turned read-only. Every request is answered within the timeout and a margin, as the failure policy
 * says; the store reports the outage, writes one stack trace at most, and decides in the database again by itself soon
 * after it answers.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class JdbcFailureIT {

	private static final Duration TIMEOUT = Duration.ofMillis(100);

	/** What a request may take beyond the timeout: the hand-off to the worker and back. */
	private static final Duration MARGIN = Duration.ofMillis(50);

	private static final Duration RECOVERY = Duration.ofSeconds(1);

	private static final RateLimitPolicy POLICY = RateLimitPolicy.of("failures", Algorithm.FIXED_WINDOW, 5,
			Duration.ofMinutes(1));

	private static final String TABLE = "failure_state";

	private static final int POOL_SIZE = 8;

	private OwnPostgres postgres;

	private OwnPostgres.Pool pool;

	private JdbcRateLimitStore store;

	private LogRecorder log;

	/** What each fault holds while it lasts, such as the connection of a lock. */
	private final AtomicReference<Connection> holder = new AtomicReference<>();

	@BeforeAll
	void startPostgres() {
		this.postgres = OwnPostgres.startOrNull();
	}

	@AfterAll
	void stopPostgres() {
		if (this.postgres != null) {
			this.postgres.close();
		}
	}

	@BeforeEach
	void requirePostgres() {
		OwnPostgres.require(this.postgres);
		this.pool = this.postgres.pool(POOL_SIZE);
		this.log = LogRecorder.record(JdbcRateLimitStore.class.getName());
	}

	@AfterEach
	void closeStore() {
		if (this.store != null) {
			this.store.close();
		}
		if (this.log != null) {
			this.log.close();
		}
	}

	enum Fault {

		STOPPED {
			@Override
			void begin(JdbcFailureIT test) {
				test.postgres.stop();
			}

			@Override
			void end(JdbcFailureIT test) {
				test.postgres.startAgain();
			}
		},

		PAUSED {
			@Override
			void begin(JdbcFailureIT test) {
				test.postgres.pause();
			}

			@Override
			void end(JdbcFailureIT test) {
				test.postgres.resume();
			}
		},

		LOCKED {
			@Override
			void begin(JdbcFailureIT test) throws Exception {
				Connection connection = test.postgres.connection();
				connection.setAutoCommit(false);
				connection.createStatement().execute("LOCK TABLE " + TABLE + " IN ACCESS EXCLUSIVE MODE");
				test.holder.set(connection);
			}

			@Override
			void end(JdbcFailureIT test) throws Exception {
				try (Connection connection = test.holder.getAndSet(null)) {
					connection.rollback();
				}
			}
		},

		POOL_EXHAUSTED {
			@Override
			void begin(JdbcFailureIT test) throws Exception {
				test.pool.exhaust();
			}

			@Override
			void end(JdbcFailureIT test) {
				test.pool.refill();
			}
		},

		READ_ONLY {
			@Override
			void begin(JdbcFailureIT test) throws Exception {
				test.postgres.execute("ALTER SYSTEM SET default_transaction_read_only = on");
				test.postgres.execute("SELECT pg_reload_conf()");
				// each backend reads the configuration again on its own: wait for those of every pooled connection
				List<Connection> connections = new ArrayList<>();
				try {
					for (int i = 0; i < POOL_SIZE; i++) {
						connections.add(test.pool.getConnection());
					}
					long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
					for (Connection connection : connections) {
						while (!readOnly(connection)) {
							assertThat(System.nanoTime() - deadline).as("read-only everywhere").isNegative();
						}
					}
				}
				finally {
					for (Connection connection : connections) {
						connection.close();
					}
				}
			}

			private static boolean readOnly(Connection connection) throws Exception {
				try (Statement statement = connection.createStatement();
						ResultSet result = statement.executeQuery("SHOW default_transaction_read_only")) {
					result.next();
					return result.getString(1).equals("on");
				}
			}

			@Override
			void end(JdbcFailureIT test) throws Exception {
				try (Connection connection = test.postgres.connection()) {
					connection.createStatement().execute("SET default_transaction_read_only = off");
					connection.createStatement().execute("ALTER SYSTEM RESET default_transaction_read_only");
					connection.createStatement().execute("SELECT pg_reload_conf()");
				}
			}
		};

		abstract void begin(JdbcFailureIT test) throws Exception;

		abstract void end(JdbcFailureIT test) throws Exception;

	}

	@ParameterizedTest(name = "{0}")
	@EnumSource(Fault.class)
	void allowsEveryRequestUnderAllow(Fault fault) throws Exception {
		decidesByThePolicyAndRecovers(fault, FailurePolicy.ALLOW);
	}

	@ParameterizedTest(name = "{0}")
	@EnumSource(Fault.class)
	void deniesEveryRequestUnderDeny(Fault fault) throws Exception {
		decidesByThePolicyAndRecovers(fault, FailurePolicy.DENY);
	}

	@ParameterizedTest(name = "{0}")
	@EnumSource(Fault.class)
	void admitsThisInstancesShareUnderLocal(Fault fault) throws Exception {
		decidesByThePolicyAndRecovers(fault, FailurePolicy.LOCAL);
	}

	@Test
	void warmsUpPastTheTimeoutWithoutTheFailurePolicyAndFailsLoudlyOnADatabaseThatIsDown() throws Exception {
		this.store = TestStores.builder(this.pool, TABLE).createSchema(true).timeout(TIMEOUT).build();
		RateLimitStore.WarmUp warmUp = this.store.warmUp().orElseThrow();
		CompletableFuture<Void> warmed;
		this.postgres.pause();
		try {
			warmed = warmUp.warmUp(List.of(List.of(POLICY))).toCompletableFuture();
			assertThat(warmed).as("waiting for a frozen database past the timeout")
				.failsWithin(TIMEOUT.multipliedBy(3))
				.withThrowableOfType(TimeoutException.class);
		}
		finally {
			this.postgres.resume();
		}
		assertThat(warmed).succeedsWithin(Duration.ofSeconds(10));
		this.postgres.stop();
		try {
			assertThat(warmUp.warmUp(List.of(List.of(POLICY)))).failsWithin(Duration.ofSeconds(10))
				.withThrowableOfType(ExecutionException.class)
				.withMessageContaining("PostgreSQL did not answer the warm-up");
		}
		finally {
			this.postgres.startAgain();
		}
		assertThat(this.store.failures().orElseThrow().status().decisions()).as("decided by the failure policy")
			.isZero();
	}

	private void decidesByThePolicyAndRecovers(Fault fault, FailurePolicy policy) throws Exception {
		this.store = TestStores.builder(this.pool, TABLE)
			.createSchema(true)
			.timeout(TIMEOUT)
			.failurePolicy(policy)
			.build();
		RateLimitStore.Failures failures = this.store.failures().orElseThrow();
		// the first calls of a cold JVM may take longer than the timeout
		long warm = System.nanoTime() + Duration.ofSeconds(10).toNanos();
		while (!this.store.limiter(POLICY).decide("warm-up").taken()) {
			assertThat(System.nanoTime() - warm).as("warming up").isNegative();
		}
		this.log.close();
		this.log = LogRecorder.record(JdbcRateLimitStore.class.getName());
		Decision first = this.store.limiter(POLICY).decide("key");
		assertThat(first.taken()).as("decided by the database").isTrue();
		assertThat(this.store.fleet().orElseThrow().size()).isEqualTo(1);
		fault.begin(this);
		int allowed = 0;
		int decided = 0;
		try {
			long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
			while (!failures.status().failing()) {
				assertThat(System.nanoTime() - deadline).as("the outage is reported").isNegative();
				long start = System.nanoTime();
				Decision decision = this.store.limiter(POLICY).decide("key");
				assertThat(Duration.ofNanos(System.nanoTime() - start)).as("time to decide")
					.isLessThanOrEqualTo(TIMEOUT.plus(MARGIN));
				assertThat(decision.taken()).as("decided by the failure policy").isFalse();
				decided++;
				allowed += decision.allowed() ? 1 : 0;
			}
			// once the outage is known, the failure policy decides at once; a database that answers the heartbeat
			// meanwhile, as one with a locked table does, is tried again, and costs the timeout again
			for (int i = 0; i < 10; i++) {
				long start = System.nanoTime();
				Decision decision = this.store.limiter(POLICY).decide("key");
				assertThat(Duration.ofNanos(System.nanoTime() - start)).as("time to decide during the outage")
					.isLessThanOrEqualTo(TIMEOUT.plus(MARGIN));
				decided++;
				allowed += decision.allowed() ? 1 : 0;
			}
			FailureStatus status = failures.status();
			assertThat(status.failurePolicy()).isEqualTo(policy);
			assertThat(status.decisions()).isGreaterThanOrEqualTo(decided);
		}
		finally {
			fault.end(this);
		}
		switch (policy) {
			case ALLOW -> assertThat(allowed).isEqualTo(decided);
			case DENY -> assertThat(allowed).isZero();
			// this instance's share, the whole limit in a fleet of one, of a key the local store had not seen
			case LOCAL -> assertThat(allowed).isEqualTo(POLICY.limit());
		}
		long answering = System.nanoTime();
		while (failures.status().failing()) {
			assertThat(Duration.ofNanos(System.nanoTime() - answering)).as("recovery, without a request")
				.isLessThanOrEqualTo(RECOVERY);
			Thread.sleep(5);
		}
		// the first decision on a new backend compiles the functions, which may take longer than the timeout
		while (!this.store.limiter(POLICY).decide("key").taken()) {
			assertThat(Duration.ofNanos(System.nanoTime() - answering)).as("decided by the database again")
				.isLessThanOrEqualTo(RECOVERY.multipliedBy(2));
		}
		assertThat(this.log.linesWithStackTrace()).as("stack traces").isLessThanOrEqualTo(1);
		assertThat(this.log.lines()).as("lines within one period of the log: %s", this.log.messages())
			.isLessThanOrEqualTo(4);
		assertThat(FailureLog.STACK_TRACE_PERIOD_NANOS).isEqualTo(Duration.ofMinutes(1).toNanos());
	}

}
