package dev.ratelimit.core.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;

import javax.sql.DataSource;

import org.jspecify.annotations.Nullable;

import dev.ratelimit.core.TimeSource;
import dev.ratelimit.core.internal.FailureKind;

/**
 * Runs each statement on a connection of the data source in autocommit, on a worker thread, and waits for it at
 * most the store's timeout, counted from before the connection is asked for: a database that is down, slow,
 * stopped, or a pool with no connection free costs a caller the timeout, never more. A statement given up on is
 * cancelled; a worker stuck on a database that no longer answers at all gives up after the network timeout.
 */
final class BoundedCalls implements AutoCloseable {

	/** The SQLState of the schema's refusal of a transaction that is not {@code READ COMMITTED}. */
	static final String NOT_READ_COMMITTED = "RL001";

	/** How much longer than the timeout a worker waits for a database that no longer answers. */
	private static final Duration NETWORK_GRACE = Duration.ofSeconds(5);

	private final DataSource dataSource;

	private final long timeoutNanos;

	private final int networkTimeoutMillis;

	private final TimeSource ticker;

	private final ExecutorService workers;

	BoundedCalls(DataSource dataSource, Duration timeout, TimeSource ticker) {
		this.dataSource = dataSource;
		this.timeoutNanos = timeout.toNanos();
		this.networkTimeoutMillis = (int) Math.min(Integer.MAX_VALUE, timeout.plus(NETWORK_GRACE).toMillis());
		this.ticker = ticker;
		AtomicInteger count = new AtomicInteger();
		this.workers = Executors.newCachedThreadPool((task) -> {
			Thread thread = new Thread(task, "ratelimit-jdbc-" + count.incrementAndGet());
			thread.setDaemon(true);
			return thread;
		});
	}

	/** Now, on the clock of {@link CallFailure#sentNanos}. */
	long nowNanos() {
		return this.ticker.nanoTime();
	}

	/**
	 * Prepares {@code sql} and hands it to {@code work}, waiting at most the timeout.
	 * @throws CallFailure if the database did not answer in time, or failed
	 */
	<T> T call(String sql, Work<T> work) throws CallFailure {
		return call(sql, work, this.timeoutNanos);
	}

	/**
	 * Prepares {@code sql} and hands it to {@code work}, waiting as long as the network timeout lets a worker
	 * wait: for a call whose caller may wait longer than the timeout, such as the warm-up's.
	 * @throws CallFailure if the database did not answer, or failed
	 */
	<T> T callPatiently(String sql, Work<T> work) throws CallFailure {
		return call(sql, work, TimeUnit.MILLISECONDS.toNanos(this.networkTimeoutMillis));
	}

	private <T> T call(String sql, Work<T> work, long timeoutNanos) throws CallFailure {
		long sent = this.ticker.nanoTime();
		Attempt attempt = new Attempt();
		Future<T> result;
		try {
			result = this.workers.submit(() -> run(sql, work, attempt));
		}
		catch (RuntimeException ex) {
			throw new CallFailure(FailureKind.ERROR, new IllegalStateException("The store is closed", ex), sent);
		}
		try {
			return result.get(timeoutNanos, TimeUnit.NANOSECONDS);
		}
		catch (TimeoutException ex) {
			Statement statement = attempt.abandon();
			result.cancel(false);
			if (statement != null) {
				this.workers.execute(() -> cancel(statement));
			}
			String waitedFor = (statement != null) ? "answer" : "give a connection";
			throw new CallFailure(FailureKind.SLOW, new TimeoutException("PostgreSQL did not " + waitedFor
					+ " within " + Duration.ofNanos(timeoutNanos).toMillis() + " ms"), sent);
		}
		catch (ExecutionException ex) {
			Throwable cause = (ex.getCause() != null) ? ex.getCause() : ex;
			throw new CallFailure(kind(cause), cause, sent);
		}
		catch (CancellationException ex) {
			throw new CallFailure(FailureKind.INTERRUPTED, ex, sent);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			result.cancel(false);
			throw new CallFailure(FailureKind.INTERRUPTED, ex, sent);
		}
	}

	private <T> @Nullable T run(String sql, Work<T> work, Attempt attempt) throws SQLException {
		try (Connection connection = this.dataSource.getConnection()) {
			if (!connection.getAutoCommit()) {
				connection.setAutoCommit(true);
			}
			int networkTimeout = connection.getNetworkTimeout();
			boolean bounded = networkTimeout == 0 || networkTimeout > this.networkTimeoutMillis;
			if (bounded) {
				connection.setNetworkTimeout(this.workers, this.networkTimeoutMillis);
			}
			try (PreparedStatement statement = connection.prepareStatement(sql)) {
				if (!attempt.start(statement)) {
					// the caller has been answered without it: it must take nothing
					return null;
				}
				return work.run(connection, statement);
			}
			finally {
				if (bounded && !connection.isClosed()) {
					connection.setNetworkTimeout(this.workers, networkTimeout);
				}
			}
		}
	}

	private static void cancel(Statement statement) {
		try {
			statement.cancel();
		}
		catch (SQLException | RuntimeException ex) {
			// the statement ended meanwhile, or the database cannot be told: the network timeout ends the wait
		}
	}

	/**
	 * Why the database did not answer: it cannot be reached (SQLState class {@code 08}, or shutting down,
	 * {@code 57P}), it gave up on the statement ({@code 57014} cancelled, {@code 55P03} lock not available), or
	 * it failed otherwise, as a read-only database refuses a write ({@code 25006}).
	 */
	static FailureKind kind(Throwable failure) {
		for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
			if (cause instanceof SQLException sql && sql.getSQLState() != null) {
				String state = sql.getSQLState();
				if (state.startsWith("08") || state.startsWith("57P")) {
					return FailureKind.UNREACHABLE;
				}
				if (state.equals("57014") || state.equals("55P03")) {
					return FailureKind.SLOW;
				}
				return FailureKind.ERROR;
			}
		}
		return FailureKind.ERROR;
	}

	/**
	 * Whether the failure is the application's rather than the database's, such as a schema that is missing
	 * (SQLState class {@code 42}) or connections that are not {@code READ COMMITTED} (the schema's
	 * {@value #NOT_READ_COMMITTED}): no failure policy hides it.
	 */
	static boolean misconfigured(Throwable failure) {
		for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
			if (cause instanceof SQLException sql && sql.getSQLState() != null) {
				return sql.getSQLState().startsWith("42") || sql.getSQLState().equals(NOT_READ_COMMITTED);
			}
		}
		return false;
	}

	/** The workers, for a call whose caller must not wait for it. */
	Executor workers() {
		return this.workers;
	}

	@Override
	public void close() {
		this.workers.shutdownNow();
	}

	/**
	 * One call's statement, once it runs, or the caller's giving up on it: whichever comes first, so that a call
	 * that waited past the timeout for a connection never runs, and one that runs is cancelled.
	 */
	private static final class Attempt {

		private @Nullable Statement running;

		private boolean abandoned;

		/** Returns whether the statement may run: the caller still waits for it. */
		synchronized boolean start(Statement statement) {
			this.running = statement;
			return !this.abandoned;
		}

		/** The caller gives up; returns the statement under way, to cancel, if any. */
		synchronized @Nullable Statement abandon() {
			this.abandoned = true;
			return this.running;
		}

	}

	@FunctionalInterface
	interface Work<T> {

		T run(Connection connection, PreparedStatement statement) throws SQLException;

	}

	/** A call that the database did not answer within the timeout, or failed. */
	static final class CallFailure extends Exception {

		private static final long serialVersionUID = 1L;

		final FailureKind kind;

		final long sentNanos;

		CallFailure(FailureKind kind, Throwable cause, long sentNanos) {
			super(cause);
			this.kind = kind;
			this.sentNanos = sentNanos;
		}

	}

}
