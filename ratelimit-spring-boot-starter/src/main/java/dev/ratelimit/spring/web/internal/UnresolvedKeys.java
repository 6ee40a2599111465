package dev.ratelimit.spring.web.internal;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.TimeSource;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * Computes the key of a request, limiting it by its client address when its key cannot be computed: a SpEL
 * expression that fails, a parameter with a bad encoding, a resolver bean that throws. The request is limited,
 * never failed nor let through, and the log gets at most one WARN line per endpoint per minute, without a stack
 * trace, as every request of a bad client would otherwise add one.
 */
public final class UnresolvedKeys {

	private static final Log logger = LogFactory.getLog(RequestDecisions.class);

	private final TimeSource time;

	private final Map<EndpointLimits, ThrottledWarning> warnings = new ConcurrentHashMap<>();

	public UnresolvedKeys(TimeSource time) {
		this.time = time;
	}

	/** The key of the endpoint's {@code index}-th policy. */
	String key(LimitedRequest request, EndpointLimits limits, Map<String, String> uriVariables, int index) {
		try {
			return limits.keys().get(index).key(request, uriVariables);
		}
		catch (RuntimeException ex) {
			this.warnings.computeIfAbsent(limits, (key) -> new ThrottledWarning(logger, this.time))
				.warn(() -> "Could not compute the key '" + limits.keySpecs().get(index) + "' of "
						+ limits.policies().stream().map(RateLimitPolicy::name).toList() + " for "
						+ request.describe() + " (" + ex
						+ "): limited by its client address instead");
			return limits.address().key(request);
		}
	}

}
