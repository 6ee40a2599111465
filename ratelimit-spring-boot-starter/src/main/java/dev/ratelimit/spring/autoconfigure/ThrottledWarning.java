package dev.ratelimit.spring.autoconfigure;

import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import dev.ratelimit.core.TimeSource;
import org.apache.commons.logging.Log;

/**
 * At most one WARN line per minute for one cause, telling how many were left out since the last: a bad
 * client would otherwise add one line per request.
 */
final class ThrottledWarning {

	private static final long INTERVAL_NANOS = TimeUnit.MINUTES.toNanos(1);

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
		long now = this.time.nanoTime();
		if (this.warned && now - this.next < 0) {
			this.suppressed++;
			return;
		}
		this.warned = true;
		this.next = now + INTERVAL_NANOS;
		long suppressed = this.suppressed;
		this.suppressed = 0;
		if (this.logger.isWarnEnabled()) {
			this.logger.warn(message.get() + ((suppressed > 0) ? "; " + suppressed + " more in the last minute" : "")
					+ ". At most one such line per minute.");
		}
	}

}
