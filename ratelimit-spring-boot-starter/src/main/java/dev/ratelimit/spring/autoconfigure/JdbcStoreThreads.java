package dev.ratelimit.spring.autoconfigure;

import java.time.Duration;
import java.util.concurrent.Executor;
import java.util.concurrent.LinkedTransferQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

import dev.ratelimit.core.jdbc.JdbcRateLimitStore;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.DisposableBean;
import org.springframework.scheduling.concurrent.CustomizableThreadFactory;

/**
 * The threads the PostgreSQL store waits for its database on, which the starter owns and shuts down with the
 * context: a bounded pool for the asynchronous decisions of a reactive application, so that its event loops never
 * wait for JDBC, and one scheduler thread that deletes idle rows.
 */
final class JdbcStoreThreads implements DisposableBean {

	/** Rows deleted by one call, so that a call holds its locks briefly. */
	static final int CLEANUP_BATCH = 1000;

	/**
	 * The longest one round deletes for, as a share of the interval: a round goes on while each call deletes a
	 * whole batch, so that it keeps up with keys turning idle as fast as hostile clients make new ones, and still
	 * ends, leaving the database the rest of the interval, when rows turn idle faster than it deletes them.
	 */
	static final double CLEANUP_SHARE_OF_INTERVAL = 0.5;

	/** Calls waiting for a thread, per thread, beyond which a call fails its decision instead of queueing. */
	static final int QUEUED_PER_THREAD = 100;

	private static final Log logger = LogFactory.getLog(JdbcRateLimitStore.class);

	private final ThreadPoolExecutor decisions;

	/** Calls running or waiting for a thread: taken without waiting, so that a full pool refuses at once. */
	private final Semaphore admitted;

	private @Nullable ScheduledThreadPoolExecutor cleanup;

	JdbcStoreThreads(int threads) {
		CustomizableThreadFactory factory = new CustomizableThreadFactory("ratelimit-jdbc-");
		factory.setDaemon(true);
		// an event loop hands calls over, and must never wait for a lock: the threads are all started at once, so
		// that handing over never adds one, and the queue takes a call without a lock
		this.decisions = new ThreadPoolExecutor(threads, threads, 0, TimeUnit.MILLISECONDS, new LinkedTransferQueue<>(),
				factory);
		this.decisions.prestartAllCoreThreads();
		this.admitted = new Semaphore(threads * (1 + QUEUED_PER_THREAD));
	}

	/** Where the store's asynchronous calls wait for the database. */
	Executor decisions() {
		return this::decide;
	}

	private void decide(Runnable call) {
		if (!this.admitted.tryAcquire()) {
			throw new RejectedExecutionException("Every thread of the PostgreSQL store is busy and "
					+ QUEUED_PER_THREAD + " calls wait for each");
		}
		try {
			this.decisions.execute(() -> {
				try {
					call.run();
				}
				finally {
					this.admitted.release();
				}
			});
		}
		catch (RejectedExecutionException ex) {
			this.admitted.release();
			throw ex;
		}
	}

	int threads() {
		return this.decisions.getMaximumPoolSize();
	}

	/** Deletes {@code store}'s idle rows every {@code interval}, unless it is zero. */
	synchronized void cleanEvery(Duration interval, JdbcRateLimitStore store) {
		if (interval.isZero() || this.cleanup != null) {
			return;
		}
		CustomizableThreadFactory factory = new CustomizableThreadFactory("ratelimit-jdbc-cleanup-");
		factory.setDaemon(true);
		this.cleanup = new ScheduledThreadPoolExecutor(1, factory);
		long millis = interval.toMillis();
		long budget = (long) (interval.toNanos() * CLEANUP_SHARE_OF_INTERVAL);
		this.cleanup.scheduleWithFixedDelay(() -> cleanUp(store, budget), millis, millis, TimeUnit.MILLISECONDS);
	}

	/** Deletes idle rows a batch at a time while whole batches come back, for at most {@code budgetNanos}. */
	static void cleanUp(JdbcRateLimitStore store, long budgetNanos) {
		long start = System.nanoTime();
		try {
			while (store.deleteExpired(CLEANUP_BATCH) == CLEANUP_BATCH && System.nanoTime() - start < budgetNanos) {
				// the next batch: rows still turn idle faster than this round has deleted them
			}
		}
		catch (RuntimeException ex) {
			// the next round tries again; a database that fails fails the decisions too, which say so
			logger.warn("Could not delete the rate limiter's idle rows: " + ex.getMessage());
		}
	}

	@Override
	public synchronized void destroy() {
		if (this.cleanup != null) {
			this.cleanup.shutdownNow();
		}
		this.decisions.shutdown();
	}

}
