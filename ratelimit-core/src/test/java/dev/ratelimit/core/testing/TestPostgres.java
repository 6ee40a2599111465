package dev.ratelimit.core.testing;

import java.net.URI;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Map;

import javax.sql.DataSource;

import org.jspecify.annotations.Nullable;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * The PostgreSQL of a test run, found once and shared by every test that uses the {@link PostgresExtension}: the
 * one at {@code POSTGRES_URL} (a JDBC URL) if set, else a {@code postgres:15-alpine} container if Docker answers,
 * else a throwaway cluster started with {@code initdb} and {@code pg_ctl} on a free loopback port
 * ({@link PostgresServerProcess}); containers and clusters started here are stopped and deleted at the end of the
 * run.
 * <p>
 * Without either, tests are skipped, unless the environment variable {@code POSTGRES_REQUIRED} is {@code true}:
 * then they fail. Only loopback addresses are ever used, since tests create and drop tables.
 */
public final class TestPostgres implements AutoCloseable {

	private final String url;

	private final String origin;

	private final AutoCloseable server;

	private final ConnectionPool pool;

	private TestPostgres(String url, String origin, AutoCloseable server) {
		this.url = url;
		this.origin = origin;
		this.server = server;
		PGSimpleDataSource connections = new PGSimpleDataSource();
		connections.setURL(url);
		this.pool = new ConnectionPool(connections);
	}

	/**
	 * Finds or starts a PostgreSQL, or returns why there is none.
	 * @return the PostgreSQL, or the reason
	 */
	static Object find() {
		String url = System.getenv("POSTGRES_URL");
		if (url != null && !url.isBlank()) {
			checkLoopback(url);
			return new TestPostgres(url, "POSTGRES_URL", () -> {
			});
		}
		TestPostgres container = fromContainer();
		if (container != null) {
			return container;
		}
		Path bin = PostgresServerProcess.binaries();
		if (bin == null) {
			return "POSTGRES_URL is not set, Docker does not answer and there is no initdb and pg_ctl on the PATH "
					+ "or in /usr/lib/postgresql";
		}
		PostgresServerProcess server = PostgresServerProcess.start(bin);
		// a run cut short still stops its cluster
		Thread stop = new Thread(server::close, "postgres-stop");
		Runtime.getRuntime().addShutdownHook(stop);
		return new TestPostgres(server.jdbcUrl(), "initdb on port " + server.port(), () -> {
			server.close();
			Runtime.getRuntime().removeShutdownHook(stop);
		});
	}

	private static @Nullable TestPostgres fromContainer() {
		// the image starts the server once to initialise it, then again for good
		LocalServers.Started container = LocalServers.container("postgres:15-alpine", 5432,
				Map.of("POSTGRES_HOST_AUTH_METHOD", "trust"), ".*database system is ready to accept connections.*\\s",
				2);
		return (container != null) ? new TestPostgres("jdbc:postgresql://" + container.host() + ":"
				+ container.port() + "/postgres?user=postgres", "Testcontainers", container.stop()) : null;
	}

	private static void checkLoopback(String url) {
		String host = URI.create(url.substring("jdbc:".length())).getHost();
		if (!LocalServers.isLoopback(host)) {
			throw new IllegalStateException("POSTGRES_URL points at " + host
					+ ", which is not a loopback address: tests only use a PostgreSQL on this machine");
		}
	}

	/**
	 * Skips the current test because {@code reason} keeps it from running, or fails it when the environment
	 * variable {@code POSTGRES_REQUIRED} is {@code true}. Call it from {@code beforeEach}, never from
	 * {@code beforeAll}, where a skipped test would vanish from the counts.
	 * @param reason what is missing
	 */
	public static void skipOrFail(String reason) {
		LocalServers.skipOrFail("PostgreSQL", "POSTGRES_REQUIRED", reason);
	}

	/**
	 * Returns a pool of connections shared by every test of the run.
	 * @return the data source
	 */
	public DataSource dataSource() {
		return this.pool;
	}

	/**
	 * Returns the JDBC URL of this PostgreSQL, with its user, for an application's {@code spring.datasource.url}.
	 * @return the URL
	 */
	public String url() {
		return this.url;
	}

	/**
	 * Runs one statement outside any store, such as to look at or change what the functions wrote.
	 * @param sql the statement
	 */
	public void execute(String sql) {
		try (Connection connection = this.pool.getConnection(); Statement statement = connection.createStatement()) {
			statement.execute(sql);
		}
		catch (SQLException ex) {
			throw new IllegalStateException(sql + ": " + ex.getMessage(), ex);
		}
	}

	/**
	 * Runs one query outside any store and returns the number in its first column of its first row.
	 * @param sql the query
	 * @return the number
	 */
	public long queryForLong(String sql) {
		try (Connection connection = this.pool.getConnection(); Statement statement = connection.createStatement();
				ResultSet result = statement.executeQuery(sql)) {
			result.next();
			return result.getLong(1);
		}
		catch (SQLException ex) {
			throw new IllegalStateException(sql + ": " + ex.getMessage(), ex);
		}
	}

	@Override
	public String toString() {
		return this.url + " (" + this.origin + ")";
	}

	@Override
	public void close() {
		this.pool.close();
		try {
			this.server.close();
		}
		catch (Exception ex) {
			// stopping on the way out: nothing left to do with a failure
		}
	}

}
