package dev.ratelimit.core.testing;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.Statement;
import java.util.concurrent.atomic.AtomicLong;

import javax.sql.DataSource;

/**
 * A data source that counts the statements its connections execute, each {@code execute}, {@code executeQuery},
 * {@code executeUpdate} or batch being one round trip to the database; the statements of a store's fleet
 * (the {@code _fleet} table and its heartbeat), which no call of the port makes, apart.
 */
public final class CountingDataSource {

	private final DataSource target;

	private final AtomicLong executed = new AtomicLong();

	/**
	 * Counts the statements executed on the connections of {@code target}.
	 * @param target the data source
	 */
	public CountingDataSource(DataSource target) {
		this.target = target;
	}

	/**
	 * Returns the data source whose statements are counted.
	 * @return the data source
	 */
	public DataSource dataSource() {
		return (DataSource) Proxy.newProxyInstance(DataSource.class.getClassLoader(),
				new Class<?>[] { DataSource.class }, (proxy, method, args) -> {
					Object result = invoke(this.target, method, args);
					return (result instanceof Connection connection) ? counting(connection) : result;
				});
	}

	/**
	 * Returns how many statements were executed so far.
	 * @return the count
	 */
	public long executed() {
		return this.executed.get();
	}

	private Connection counting(Connection connection) {
		return (Connection) Proxy.newProxyInstance(Connection.class.getClassLoader(),
				new Class<?>[] { Connection.class }, (proxy, method, args) -> {
					Object result = invoke(connection, method, args);
					if (args != null && args.length > 0 && args[0] instanceof String sql
							&& (sql.contains("_heartbeat(") || sql.contains("_fleet "))) {
						return result;
					}
					if (result instanceof Statement statement) {
						return counting(statement, method.getReturnType());
					}
					return result;
				});
	}

	private Object counting(Statement statement, Class<?> type) {
		return Proxy.newProxyInstance(Statement.class.getClassLoader(), new Class<?>[] { type }, (proxy, method, args) -> {
			if (method.getName().startsWith("execute")) {
				this.executed.incrementAndGet();
			}
			return invoke(statement, method, args);
		});
	}

	private static Object invoke(Object target, Method method, Object[] args) throws Throwable {
		try {
			return method.invoke(target, args);
		}
		catch (InvocationTargetException ex) {
			throw ex.getCause();
		}
	}

}
