package dev.ratelimit.spring.autoconfigure;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.TimeSource;
import jakarta.servlet.http.HttpServletRequest;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * Computes the key of a request, limiting it by its client address when its key cannot be computed: a SpEL
 * expression that fails, a parameter with a bad encoding, a resolver bean that throws. The request is limited,
 * never failed nor let through, and the log gets at most one WARN line per endpoint per minute, without a stack
 * trace, as every request of a bad client would otherwise add one.
 */
final class UnresolvedKeys {

	private static final Log logger = LogFactory.getLog(RateLimitInterceptor.class);

	private static final long WARNING_INTERVAL_NANOS = TimeUnit.MINUTES.toNanos(1);

	private final TimeSource time;

	private final Map<EndpointLimits, Warnings> warnings = new ConcurrentHashMap<>();

	UnresolvedKeys(TimeSource time) {
		this.time = time;
	}

	/** The key of the endpoint's {@code index}-th policy. */
	String key(HttpServletRequest request, LimitCatalog.Match match, int index) {
		EndpointLimits limits = match.limits();
		try {
			return limits.keys().get(index).key(request, match.uriVariables());
		}
		catch (RuntimeException ex) {
			this.warnings.computeIfAbsent(limits, (key) -> new Warnings())
				.failed(limits, limits.keySpecs().get(index), request, ex, this.time);
			return limits.address().key(request);
		}
	}

	/** The warnings of one endpoint. */
	private static final class Warnings {

		private boolean warned;

		private long next;

		private long suppressed;

		synchronized void failed(EndpointLimits limits, String keySpec, HttpServletRequest request,
				RuntimeException ex, TimeSource time) {
			long now = time.nanoTime();
			if (this.warned && now - this.next < 0) {
				this.suppressed++;
				return;
			}
			this.warned = true;
			this.next = now + WARNING_INTERVAL_NANOS;
			long suppressed = this.suppressed;
			this.suppressed = 0;
			if (logger.isWarnEnabled()) {
				logger.warn("Could not compute the key '" + keySpec + "' of "
						+ limits.policies().stream().map(RateLimitPolicy::name).toList() + " for "
						+ request.getMethod() + " " + request.getRequestURI() + " (" + ex + "): limited by its client "
						+ "address instead" + ((suppressed > 0) ? "; " + suppressed + " more in the last minute" : "")
						+ ". At most one such line per minute.");
			}
		}

	}

}
