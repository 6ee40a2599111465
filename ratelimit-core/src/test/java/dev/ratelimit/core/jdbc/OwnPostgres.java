package dev.ratelimit.core.jdbc;

import java.io.PrintWriter;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.sql.Statement;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Semaphore;
import java.util.logging.Logger;

import javax.sql.DataSource;

import org.postgresql.ds.PGSimpleDataSource;

import dev.ratelimit.core.testing.PostgresServerProcess;
import dev.ratelimit.core.testing.TestPostgres;

/**
 * A PostgreSQL cluster of one test class, which the tests may stop, start again, lock or make read-only without
 * disturbing the other tests of the run.
 */
final class OwnPostgres implements AutoCloseable {

	private final PostgresServerProcess server;

	private final PGSimpleDataSource connections = new PGSimpleDataSource();

	private OwnPostgres(PostgresServerProcess server) {
		this.server = server;
		this.connections.setURL(server.jdbcUrl());
	}

	/** Starts a cluster, or returns null when this machine has none to start. */
	static OwnPostgres startOrNull() {
		Path bin = PostgresServerProcess.binaries();
		return (bin != null) ? new OwnPostgres(PostgresServerProcess.start(bin)) : null;
	}

	/** Skips or fails the test, from {@code beforeEach}, when there is no cluster. */
	static void require(OwnPostgres postgres) {
		if (postgres == null) {
			TestPostgres.skipOrFail("there is no initdb and pg_ctl on the PATH or in /usr/lib/postgresql");
		}
	}

	/**
	 * A pool of at most {@code size} connections at once, which checks an idle connection before it hands it out
	 * again, as pools do, so that a server started again gets new ones.
	 */
	Pool pool(int size) {
		return new Pool(this.connections, size);
	}

	void stop() {
		this.server.stop();
	}

	void startAgain() {
		this.server.startAgain();
	}

	void pause() {
		this.server.pause();
	}

	void resume() {
		this.server.resume();
	}

	/** Runs one statement on a connection of its own. */
	void execute(String sql) {
		try (Connection connection = this.connections.getConnection();
				Statement statement = connection.createStatement()) {
			statement.execute(sql);
		}
		catch (SQLException ex) {
			throw new IllegalStateException(sql + ": " + ex.getMessage(), ex);
		}
	}

	/** Opens a connection of the test's own, outside any pool. */
	Connection connection() throws SQLException {
		return this.connections.getConnection();
	}

	@Override
	public void close() {
		this.server.close();
	}

	/**
	 * A pool that hands out at most {@code size} connections at once and makes the others wait, as long as it
	 * takes, as an exhausted pool does.
	 */
	static final class Pool implements DataSource {

		private final DataSource connections;

		private final Queue<Connection> idle = new ConcurrentLinkedQueue<>();

		private final Semaphore free;

		private final int size;

		private volatile boolean driverHidden;

		Pool(DataSource connections, int size) {
			this.connections = connections;
			this.size = size;
			this.free = new Semaphore(size);
		}

		/** Takes every connection, so that each caller waits. */
		void exhaust() throws InterruptedException {
			this.free.acquire(this.size);
		}

		/** Hands out connections that do not say they are PostgreSQL's driver's, as another driver's would not. */
		Pool hidingTheDriver() {
			this.driverHidden = true;
			return this;
		}

		/** Gives back what {@link #exhaust()} took. */
		void refill() {
			this.free.release(this.size);
		}

		@Override
		public Connection getConnection() throws SQLException {
			this.free.acquireUninterruptibly();
			try {
				Connection connection = idleOrNew();
				return (Connection) Proxy.newProxyInstance(Connection.class.getClassLoader(),
						new Class<?>[] { Connection.class }, new InvocationHandler() {

							private boolean closed;

							@Override
							public Object invoke(Object proxy, Method method, Object[] args)
									throws Throwable {
								if (method.getName().equals("close")) {
									synchronized (this) {
										if (!this.closed) {
											this.closed = true;
											Pool.this.idle.add(connection);
											Pool.this.free.release();
										}
									}
									return null;
								}
								if (method.getName().equals("isWrapperFor") && Pool.this.driverHidden) {
									return false;
								}
								if (method.getName().equals("isClosed")) {
									synchronized (this) {
										return this.closed || connection.isClosed();
									}
								}
								try {
									return method.invoke(connection, args);
								}
								catch (InvocationTargetException ex) {
									throw ex.getCause();
								}
							}

						});
			}
			catch (SQLException | RuntimeException ex) {
				this.free.release();
				throw ex;
			}
		}

		private Connection idleOrNew() throws SQLException {
			for (Connection connection = this.idle.poll(); connection != null; connection = this.idle.poll()) {
				if (connection.isValid(1)) {
					return connection;
				}
				connection.close();
			}
			return this.connections.getConnection();
		}

		@Override
		public Connection getConnection(String username, String password) throws SQLException {
			throw new SQLFeatureNotSupportedException();
		}

		@Override
		public PrintWriter getLogWriter() {
			return null;
		}

		@Override
		public void setLogWriter(PrintWriter out) {
		}

		@Override
		public void setLoginTimeout(int seconds) {
		}

		@Override
		public int getLoginTimeout() {
			return 0;
		}

		@Override
		public Logger getParentLogger() throws SQLFeatureNotSupportedException {
			throw new SQLFeatureNotSupportedException();
		}

		@Override
		public <T> T unwrap(Class<T> type) throws SQLException {
			throw new SQLException("not a wrapper of " + type);
		}

		@Override
		public boolean isWrapperFor(Class<?> type) {
			return false;
		}

	}

}
