package dev.ratelimit.core.redis;

import java.lang.System.Logger.Level;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Reports decisions made without Redis in the log without flooding it: the first failure of an outage at
 * once with its stack trace, then at most one line per period with the count since the last line, and one
 * line when Redis answers again.
 */
final class FailureLog {

	private static final System.Logger logger = System.getLogger(RedisRateLimitStore.class.getName());

	private static final long PERIOD_NANOS = TimeUnit.SECONDS.toNanos(10);

	private final FailurePolicy policy;

	/** Decisions made without Redis since the last log line. */
	private final AtomicLong unreported = new AtomicLong();

	/** Decisions made without Redis since the outage began, reported up to the last log line. */
	private long reported;

	private volatile boolean reporting;

	private volatile long nextReport;

	FailureLog(FailurePolicy policy) {
		this.policy = policy;
	}

	void failed(Throwable cause) {
		this.unreported.incrementAndGet();
		long now = System.nanoTime();
		if (this.reporting && now - this.nextReport < 0) {
			return;
		}
		synchronized (this) {
			if (this.reporting && now - this.nextReport < 0) {
				return;
			}
			boolean first = !this.reporting;
			this.reporting = true;
			this.nextReport = now + PERIOD_NANOS;
			long count = this.unreported.getAndSet(0);
			this.reported = (first ? 0 : this.reported) + count;
			if (first) {
				logger.log(Level.WARNING, "Redis did not decide a request; the " + this.policy
						+ " failure policy decides until it answers again", cause);
			}
			else {
				logger.log(Level.WARNING, "Redis is still not deciding: the " + this.policy
						+ " failure policy made " + count + " decisions in the last 10 s; last failure: " + cause);
			}
		}
	}

	void recovered() {
		if (!this.reporting) {
			return;
		}
		synchronized (this) {
			if (this.reporting) {
				this.reporting = false;
				long count = this.reported + this.unreported.getAndSet(0);
				logger.log(Level.INFO, "Redis decides again; the " + this.policy + " failure policy made " + count
						+ " decisions while it did not");
			}
		}
	}

	void listenerFailed(RuntimeException ex) {
		logger.log(Level.WARNING, "The Redis failure listener threw an exception", ex);
	}

}
