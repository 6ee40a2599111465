package dev.ratelimit.core.jdbc;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import javax.sql.DataSource;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import dev.ratelimit.core.RateLimitStore;
import dev.ratelimit.core.RateLimitStore.SharedChange;
import dev.ratelimit.core.RateLimitStore.SharedChanges;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * The runtime changes that instances on one table share: kept in the database, where an instance that starts later
 * and one whose database restarted read them, apart by key prefix, and told to every instance, at once where it
 * listens for PostgreSQL's notifications and at its heartbeat where it cannot.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class JdbcSharedChangesIT {

	private static final String TABLE = "changes_state";

	private static final SharedChange THIRTY = new SharedChange(30, Duration.ofMinutes(1), 30);

	private static final AtomicInteger runs = new AtomicInteger();

	private OwnPostgres postgres;

	private String prefix;

	private final List<JdbcRateLimitStore> stores = new ArrayList<>();

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
	void newPrefix() {
		OwnPostgres.require(this.postgres);
		this.prefix = "run-" + runs.incrementAndGet() + ":";
	}

	@AfterEach
	void closeStores() {
		this.stores.forEach(JdbcRateLimitStore::close);
		this.stores.clear();
	}

	@Test
	void anInstanceThatListensIsToldOfAChangeByItsNotification() throws InterruptedException {
		SharedChanges sharing = changes(store(this.postgres.pool(4), this.prefix));
		SharedChanges listening = changes(store(this.postgres.pool(4), this.prefix));
		BlockingQueue<String> told = new LinkedBlockingQueue<>();
		listening.onChange(() -> told.add(Thread.currentThread().getName() + " " + listening.read(List.of("api"))));
		// once listening, it reads what changed while nobody listened
		awaitTold(told, "ratelimit-jdbc-changes", "{}");
		sharing.share("api", THIRTY);
		awaitTold(told, "ratelimit-jdbc-changes", "{api=" + THIRTY + "}");
		sharing.share("api", null);
		awaitTold(told, "ratelimit-jdbc-changes", "{}");
	}

	@Test
	void anInstanceWhoseDriverCannotListenIsToldAtItsHeartbeat() throws InterruptedException {
		SharedChanges sharing = changes(store(this.postgres.pool(4), this.prefix));
		SharedChanges heartbeatOnly = changes(store(this.postgres.pool(4).hidingTheDriver(), this.prefix));
		BlockingQueue<String> told = new LinkedBlockingQueue<>();
		heartbeatOnly.onChange(
				() -> told.add(Thread.currentThread().getName() + " " + heartbeatOnly.read(List.of("api"))));
		sharing.share("api", THIRTY);
		assertThat(awaitTold(told, "ratelimit-jdbc-fleet", "{api=" + THIRTY + "}"))
			.noneMatch((line) -> line.startsWith("ratelimit-jdbc-changes"));
	}

	@Test
	void anInstanceThatStartsLaterReadsTheChangesOfItsPrefixOnly() {
		changes(store(this.postgres.pool(2), this.prefix)).share("api", THIRTY);
		assertThat(changes(store(this.postgres.pool(2), this.prefix)).read(List.of("api", "other")))
			.isEqualTo(Map.of("api", THIRTY));
		assertThat(changes(store(this.postgres.pool(2), "another:" + this.prefix)).read(List.of("api"))).isEmpty();
	}

	@Test
	void theChangesOutliveARestartOfTheDatabaseAndAChangeItCannotStoreFailsLoudly() {
		SharedChanges changes = changes(store(this.postgres.pool(2), this.prefix));
		changes.share("api", THIRTY);
		this.postgres.stop();
		try {
			assertThatIllegalStateException().isThrownBy(() -> changes.share("api", null))
				.withMessageStartingWith("PostgreSQL did not store the change of policy 'api'");
		}
		finally {
			this.postgres.startAgain();
		}
		assertThat(changes(store(this.postgres.pool(2), this.prefix)).read(List.of("api")))
			.isEqualTo(Map.of("api", THIRTY));
	}

	private JdbcRateLimitStore store(DataSource dataSource, String prefix) {
		JdbcRateLimitStore store = JdbcRateLimitStore.builder(dataSource)
			.tableName(TABLE)
			.keyPrefix(prefix)
			.timeout(Duration.ofSeconds(1))
			.build();
		this.stores.add(store);
		return store;
	}

	private static SharedChanges changes(RateLimitStore store) {
		return store.sharedChanges().orElseThrow();
	}

	/**
	 * Waits up to 10 s for the thread named {@code thread} to tell that the listener read {@code read}, skipping
	 * what the other threads told.
	 * @return every line told meanwhile
	 */
	private static List<String> awaitTold(BlockingQueue<String> told, String thread, String read)
			throws InterruptedException {
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
		List<String> lines = new ArrayList<>();
		for (String line = told.poll(10, TimeUnit.SECONDS); line != null;
				line = told.poll(deadline - System.nanoTime(), TimeUnit.NANOSECONDS)) {
			lines.add(line);
			if (line.equals(thread + " " + read)) {
				return lines;
			}
		}
		throw new AssertionError(thread + " did not tell " + read + " within 10 s, told: " + lines);
	}

}
