package dev.ratelimit.core.jdbc;

import java.sql.ResultSet;
import java.sql.Types;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.Collection;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

import javax.sql.DataSource;

import org.jspecify.annotations.Nullable;

import dev.ratelimit.core.RateLimitStore;

/**
 * The runtime changes of policies that the instances sharing the store's table and key prefix share, kept in the
 * table's {@code _changes} table. Every change advances a version that each {@link DatabaseFleet heartbeat} reads,
 * so that every instance tells the listener within about a second; an instance whose driver is PostgreSQL's own
 * also {@code LISTEN}s on the changes' channel, on a connection of its own, and tells it at once.
 */
final class FleetChanges implements RateLimitStore.SharedChanges, AutoCloseable {

	private static final String LISTENING_DRIVER = "org.postgresql.PGConnection";

	private final BoundedCalls calls;

	private final DatabaseFailures failures;

	private final DataSource dataSource;

	private final String prefix;

	private final String channel;

	private final String share;

	private final String read;

	private volatile Runnable listener = () -> {
	};

	/** The version of the shared changes the listener was last told of, -1 before the first heartbeat. */
	private long heard = -1;

	private @Nullable ChangeNotifications notifications;

	private boolean closed;

	FleetChanges(BoundedCalls calls, DatabaseFailures failures, DataSource dataSource, String table, String prefix) {
		this.calls = calls;
		this.failures = failures;
		this.dataSource = dataSource;
		this.prefix = prefix;
		this.channel = channel(table);
		this.share = "SELECT " + table + "_share(?, ?, ?, ?, ?, ?)";
		this.read = "SELECT policy, lim, window_us, burst FROM " + table
				+ "_changes WHERE prefix = ? AND policy = ANY (?)";
	}

	/** The channel of a table's changes: its name without the schema, which LISTEN takes as an identifier. */
	static String channel(String table) {
		return table.substring(table.lastIndexOf('.') + 1).toLowerCase(Locale.ROOT) + "_changes";
	}

	/**
	 * {@inheritDoc}
	 * <p>
	 * The change stays in the database, where instances that start later read it, until it is removed; it is
	 * committed before this method returns. Waits for the database at most the store's timeout.
	 */
	@Override
	public void share(String policy, RateLimitStore.@Nullable SharedChange change) {
		Objects.requireNonNull(policy, "policy must not be null");
		try {
			this.calls.call(this.share, (connection, statement) -> {
				statement.setString(1, this.prefix);
				statement.setString(2, policy);
				if (change != null) {
					statement.setLong(3, change.limit());
					statement.setLong(4, TimeUnit.NANOSECONDS.toMicros(change.window().toNanos()));
					statement.setLong(5, change.burst());
				}
				else {
					statement.setNull(3, Types.BIGINT);
					statement.setNull(4, Types.BIGINT);
					statement.setNull(5, Types.BIGINT);
				}
				statement.setString(6, this.channel);
				return statement.execute();
			});
		}
		catch (BoundedCalls.CallFailure failure) {
			throw new IllegalStateException("PostgreSQL did not store the change of policy '" + policy + "': "
					+ failure.getCause(), failure.getCause());
		}
	}

	/**
	 * {@inheritDoc}
	 * <p>
	 * Waits for the database at most the store's timeout.
	 */
	@Override
	public Map<String, RateLimitStore.SharedChange> read(Collection<String> policies) {
		String[] names = policies.toArray(String[]::new);
		try {
			return this.calls.call(this.read, (connection, statement) -> {
				statement.setString(1, this.prefix);
				statement.setArray(2, connection.createArrayOf("text", names));
				Map<String, RateLimitStore.SharedChange> changes = new TreeMap<>();
				try (ResultSet result = statement.executeQuery()) {
					while (result.next()) {
						changes.put(result.getString(1), new RateLimitStore.SharedChange(result.getLong(2),
								Duration.of(result.getLong(3), ChronoUnit.MICROS), result.getLong(4)));
					}
				}
				return changes;
			});
		}
		catch (BoundedCalls.CallFailure failure) {
			throw new IllegalStateException("PostgreSQL did not tell the shared changes of the policies: "
					+ failure.getCause(), failure.getCause());
		}
	}

	/**
	 * {@inheritDoc}
	 * <p>
	 * The listener runs on the heartbeat's thread when a heartbeat finds a new version of the shared changes, the
	 * first one included, and, once it is set, on the thread that listens for the changes' notifications, which
	 * holds a connection of the data source for as long as the store is open.
	 */
	@Override
	public void onChange(Runnable listener) {
		this.listener = Objects.requireNonNull(listener, "listener must not be null");
		synchronized (this) {
			if (this.notifications == null && !this.closed && listening()) {
				this.notifications = ChangeNotifications.start(this.dataSource, this.channel, this.prefix,
						this::changed);
			}
		}
	}

	/** Whether the PostgreSQL driver that can listen is there, for the changes to arrive before the heartbeat. */
	private static boolean listening() {
		try {
			Class.forName(LISTENING_DRIVER, false, FleetChanges.class.getClassLoader());
			return true;
		}
		catch (ClassNotFoundException | LinkageError ex) {
			return false;
		}
	}

	/** Tells the listener when a heartbeat found a version of the shared changes that it has not been told of. */
	void heard(long version) {
		synchronized (this) {
			if (version == this.heard) {
				return;
			}
			this.heard = version;
		}
		changed();
	}

	private void changed() {
		try {
			this.listener.run();
		}
		catch (RuntimeException ex) {
			this.failures.listenerFailed(ex);
		}
	}

	/** Stops listening for the changes' notifications, and gives the listening connection back. */
	@Override
	public synchronized void close() {
		this.closed = true;
		if (this.notifications != null) {
			this.notifications.close();
		}
	}

}
