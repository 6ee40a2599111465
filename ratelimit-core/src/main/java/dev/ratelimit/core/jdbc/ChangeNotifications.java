package dev.ratelimit.core.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import javax.sql.DataSource;

import org.postgresql.PGConnection;
import org.postgresql.PGNotification;

/**
 * A thread that {@code LISTEN}s on the channel of the shared changes, on a connection of the data source that it
 * holds, and tells of every notification of its key prefix at once. Where the connection is not PostgreSQL's
 * driver's, or breaks, the heartbeat alone tells of the changes: the thread connects again a
 * {@link DatabaseFleet#PERIOD heartbeat's period} later. Used only where that driver is on the class path.
 */
final class ChangeNotifications implements AutoCloseable {

	private static final System.Logger logger = System.getLogger(ChangeNotifications.class.getName());

	/** How long one wait for notifications lasts, and so how long closing may take the thread to notice. */
	private static final int WAIT_MILLIS = 250;

	private final DataSource dataSource;

	private final String channel;

	private final String prefix;

	private final Runnable changed;

	private final CountDownLatch closed = new CountDownLatch(1);

	private final Thread thread;

	private ChangeNotifications(DataSource dataSource, String channel, String prefix, Runnable changed) {
		this.dataSource = dataSource;
		this.channel = channel;
		this.prefix = prefix;
		this.changed = changed;
		this.thread = new Thread(this::run, "ratelimit-jdbc-changes");
		this.thread.setDaemon(true);
	}

	/** Starts listening on a daemon thread of its own. */
	static ChangeNotifications start(DataSource dataSource, String channel, String prefix, Runnable changed) {
		ChangeNotifications notifications = new ChangeNotifications(dataSource, channel, prefix, changed);
		notifications.thread.start();
		return notifications;
	}

	private void run() {
		try {
			while (this.closed.getCount() > 0) {
				if (!listen()) {
					return;
				}
				this.closed.await(DatabaseFleet.PERIOD.toMillis(), TimeUnit.MILLISECONDS);
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	/**
	 * Listens until closed or the connection fails; returns false where the driver cannot listen, true to try
	 * again.
	 */
	private boolean listen() {
		try (Connection connection = this.dataSource.getConnection()) {
			if (!connection.isWrapperFor(PGConnection.class)) {
				return false;
			}
			PGConnection listening = connection.unwrap(PGConnection.class);
			if (!connection.getAutoCommit()) {
				connection.setAutoCommit(true);
			}
			try (Statement statement = connection.createStatement()) {
				statement.execute("LISTEN " + this.channel);
			}
			try {
				// what changed while nobody listened
				this.changed.run();
				while (this.closed.getCount() > 0) {
					PGNotification[] notifications = listening.getNotifications(WAIT_MILLIS);
					if (notifications != null && ofThisPrefix(notifications)) {
						this.changed.run();
					}
				}
			}
			finally {
				// the connection goes back to its pool, which must not hand it out still listening
				if (!connection.isClosed()) {
					try (Statement statement = connection.createStatement()) {
						statement.execute("UNLISTEN " + this.channel);
					}
					catch (SQLException ex) {
						// a broken connection, which its pool discards
					}
				}
			}
		}
		catch (SQLException ex) {
			logger.log(System.Logger.Level.DEBUG, "Listening on " + this.channel + " failed: " + ex);
		}
		return true;
	}

	private boolean ofThisPrefix(PGNotification[] notifications) {
		for (PGNotification notification : notifications) {
			if (this.prefix.equals(notification.getParameter())) {
				return true;
			}
		}
		return false;
	}

	/**
	 * Stops listening and gives the connection back, waiting for it a little longer than one wait for
	 * notifications, so that the application's pool, which closes after the store, finds it back.
	 */
	@Override
	public void close() {
		this.closed.countDown();
		try {
			this.thread.join(4L * WAIT_MILLIS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

}
