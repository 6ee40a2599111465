package dev.ratelimit.spring.observability.internal;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.concurrent.ConcurrentHashMap;

import dev.ratelimit.core.Decision;
import dev.ratelimit.spring.RateLimitConfigurationException;

/**
 * Tells whether an admitted request left its key near the limit, with fewer permits than
 * {@code ratelimit.near-limit-share} of the limit, exactly: the share is taken as the decimal it is written as.
 */
public final class NearLimit {

	static final String PROPERTY = "ratelimit.near-limit-share";

	/** At most this many limits keep their threshold; there are as many as declared limits and plans. */
	private static final int MAX_THRESHOLDS = 1024;

	private final BigDecimal share;

	/** The fewest permits left that are not near the limit, by limit. */
	private final ConcurrentHashMap<Long, Long> thresholds = new ConcurrentHashMap<>();

	private NearLimit(BigDecimal share) {
		this.share = share;
	}

	/**
	 * Returns the near limit of {@code share}, or fails naming the property unless it is greater than 0 and
	 * less than 1.
	 */
	public static NearLimit of(double share) {
		if (!(share > 0 && share < 1)) {
			throw new RateLimitConfigurationException(
					"Invalid " + PROPERTY + ": " + share + " is not a share of a limit, greater than 0 and less than 1.",
					"Update " + PROPERTY + " in your application's configuration; 0.2 counts the requests that leave "
							+ "fewer than 20% of the limit.");
		}
		return new NearLimit(BigDecimal.valueOf(share));
	}

	/** Whether the allowed decision left fewer permits than the share of its limit. */
	boolean isNear(Decision decision) {
		return decision.allowed() && decision.remaining() < threshold(decision.limit());
	}

	private long threshold(long limit) {
		Long threshold = this.thresholds.get(limit);
		if (threshold == null) {
			threshold = this.share.multiply(BigDecimal.valueOf(limit)).setScale(0, RoundingMode.CEILING).longValue();
			if (this.thresholds.size() < MAX_THRESHOLDS) {
				this.thresholds.put(limit, threshold);
			}
		}
		return threshold;
	}

}
