package dev.ratelimit.spring.web.internal;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.TimeSource;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * Tells what the policies in shadow mode would have done: per policy, at most one INFO line a minute saying how
 * many requests it would have rejected and delayed since its previous line, never a line per request.
 */
public final class ShadowLog {

	private static final Log logger = LogFactory.getLog(RequestDecisions.class);

	private final TimeSource time;

	private final Map<String, PolicyLine> lines = new ConcurrentHashMap<>();

	public ShadowLog(TimeSource time) {
		this.time = time;
	}

	/** Counts one request that {@code policies} would have rejected. */
	void rejected(List<RateLimitPolicy> policies) {
		for (RateLimitPolicy policy : policies) {
			line(policy).add(1, 0);
		}
	}

	/** Counts one request that {@code policies} would have held until its slot. */
	void delayed(List<RateLimitPolicy> policies) {
		for (RateLimitPolicy policy : policies) {
			line(policy).add(0, 1);
		}
	}

	private PolicyLine line(RateLimitPolicy policy) {
		return this.lines.computeIfAbsent(policy.name(),
				(name) -> new PolicyLine(name, new ThrottledWarning(logger, this.time)));
	}

	/** The requests of one policy not told yet. */
	private static final class PolicyLine {

		private final String policy;

		private final ThrottledWarning line;

		private long rejected;

		private long delayed;

		private boolean told;

		PolicyLine(String policy, ThrottledWarning line) {
			this.policy = policy;
			this.line = line;
		}

		synchronized void add(long rejected, long delayed) {
			this.rejected += rejected;
			this.delayed += delayed;
			if (this.line.info(this::message)) {
				this.rejected = 0;
				this.delayed = 0;
				this.told = true;
			}
		}

		private String message() {
			return "Rate limit '" + this.policy + "' is in shadow mode: it let through " + this.rejected
					+ ((this.rejected == 1) ? " request" : " requests") + " it would have rejected and " + this.delayed
					+ " it would have delayed " + (this.told ? "since its previous line" : "since the start");
		}

	}

}
