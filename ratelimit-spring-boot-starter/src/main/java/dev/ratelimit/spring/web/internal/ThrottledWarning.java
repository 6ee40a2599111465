package dev.ratelimit.spring.web.internal;

import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import dev.ratelimit.core.TimeSource;
import org.apache.commons.logging.Log;

/**
 * At most one line per minute for one cause: a WARN line telling how many were left out since the last, as a
 * bad client would otherwise add one line per request, or an INFO line summing up what its caller counted
 * since the last.
 */
final class ThrottledWarning {

	private static final long INTERVAL_NANOS = TimeUnit.MINUTES.toNanos(1);

	private static final String ONCE_A_MINUTE = ". At most one such line per minute.";

	private final Log logger;

	private final TimeSource time;

	private boolean warned;

	private long next;

	private long suppressed;

	ThrottledWarning(Log logger, TimeSource time) {
		this.logger = logger;
		this.time = time;
	}

	/** Logs {@code message}, without a stack trace, unless a line was logged less than a minute ago. */
	synchronized void warn(Supplier<String> message) {
		if (!due()) {
			this.suppressed++;
			return;
		}
		long suppressed = this.suppressed;
		this.suppressed = 0;
		if (this.logger.isWarnEnabled()) {
			this.logger.warn(message.get() + ((suppressed > 0) ? "; " + suppressed + " more in the last minute" : "")
					+ ONCE_A_MINUTE);
		}
	}

	/**
	 * Logs {@code message} at INFO unless a line was logged less than a minute ago; returns whether the line was
	 * due, so that the caller starts counting afresh.
	 */
	synchronized boolean info(Supplier<String> message) {
		if (!due()) {
			return false;
		}
		if (this.logger.isInfoEnabled()) {
			this.logger.info(message.get() + ONCE_A_MINUTE);
		}
		return true;
	}

	private boolean due() {
		long now = this.time.nanoTime();
		if (this.warned && now - this.next < 0) {
			return false;
		}
		this.warned = true;
		this.next = now + INTERVAL_NANOS;
		return true;
	}

}
