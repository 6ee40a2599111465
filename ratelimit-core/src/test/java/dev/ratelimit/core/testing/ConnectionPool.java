package dev.ratelimit.core.testing;

import java.io.PrintWriter;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.logging.Logger;

import javax.sql.DataSource;

/**
 * The smallest connection pool that tests need: connections of another data source kept open and handed out
 * again, each given back when the caller closes it, so that a test deciding thousands of requests opens a
 * connection per thread rather than per request.
 */
public final class ConnectionPool implements DataSource, AutoCloseable {

	private final DataSource connections;

	private final Queue<Connection> idle = new ConcurrentLinkedQueue<>();

	/**
	 * Creates a pool of the connections of {@code connections}.
	 * @param connections where new connections come from
	 */
	public ConnectionPool(DataSource connections) {
		this.connections = connections;
	}

	@Override
	public Connection getConnection() throws SQLException {
		Connection physical = this.idle.poll();
		if (physical == null || physical.isClosed()) {
			physical = this.connections.getConnection();
		}
		Connection connection = physical;
		AtomicBoolean closed = new AtomicBoolean();
		return (Connection) Proxy.newProxyInstance(Connection.class.getClassLoader(),
				new Class<?>[] { Connection.class }, (proxy, method, args) -> {
					if (method.getName().equals("close")) {
						if (closed.compareAndSet(false, true)) {
							this.idle.add(connection);
						}
						return null;
					}
					if (method.getName().equals("isClosed")) {
						return closed.get();
					}
					try {
						return method.invoke(connection, args);
					}
					catch (InvocationTargetException ex) {
						throw ex.getCause();
					}
				});
	}

	@Override
	public Connection getConnection(String username, String password) throws SQLException {
		throw new SQLFeatureNotSupportedException("a pool of one user's connections");
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

	/**
	 * Closes every idle connection.
	 */
	@Override
	public void close() {
		for (Connection connection = this.idle.poll(); connection != null; connection = this.idle.poll()) {
			try {
				connection.close();
			}
			catch (SQLException ex) {
				// closing on the way out
			}
		}
	}

}
