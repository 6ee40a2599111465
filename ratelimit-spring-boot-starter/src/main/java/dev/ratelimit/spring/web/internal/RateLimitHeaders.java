package dev.ratelimit.spring.web.internal;

import java.util.List;

import dev.ratelimit.core.Decision;
import dev.ratelimit.core.RateLimitPolicy;

import org.springframework.http.HttpHeaders;

/**
 * Writes the rate limit response headers. {@code RateLimit-Policy} and {@code RateLimit} follow the newest
 * IETF draft: each is an RFC 9651 list with one member per applying policy, the policy's name as a string
 * and integer parameters. Every number of seconds is rounded up, so that a client waiting that long is never
 * early.
 */
public final class RateLimitHeaders {

	static final String POLICY = "RateLimit-Policy";

	static final String RATE_LIMIT = "RateLimit";

	/** RFC 9651 integers have at most 15 digits. */
	private static final long MAX_INTEGER = 999_999_999_999_999L;

	private RateLimitHeaders() {
	}

	/** Returns {@code "name";q=<limit>;w=<window seconds>}, one member per policy. */
	static String policy(List<RateLimitPolicy> policies) {
		StringBuilder header = new StringBuilder();
		for (RateLimitPolicy policy : policies) {
			if (header.length() > 0) {
				header.append(", ");
			}
			long windowSeconds = Math.max(1, seconds(policy.window().toNanos()));
			member(header, policy).append(";q=").append(integer(policy.limit())).append(";w=").append(windowSeconds);
		}
		return header.toString();
	}

	/** Returns {@code "name";r=<remaining>;t=<seconds until the quota is full>}, one member per policy. */
	static String rateLimit(List<RateLimitPolicy> policies, List<Decision> decisions) {
		StringBuilder header = new StringBuilder();
		for (int i = 0; i < policies.size(); i++) {
			Decision decision = decisions.get(i);
			if (header.length() > 0) {
				header.append(", ");
			}
			member(header, policies.get(i)).append(";r=")
				.append(integer(decision.remaining()))
				.append(";t=")
				.append(integer(seconds(decision.resetAfterNanos())));
		}
		return header.toString();
	}

	/**
	 * Writes the draft headers of {@code policies}, whose {@code RateLimit-Policy} is {@code policyHeader}, and,
	 * if asked, the legacy ones for the policy with the fewest permits left.
	 */
	static void write(HttpHeaders headers, String policyHeader, List<RateLimitPolicy> policies,
			List<Decision> decisions, boolean legacy) {
		headers.set(POLICY, policyHeader);
		headers.set(RATE_LIMIT, rateLimit(policies, decisions));
		if (legacy) {
			int tightest = 0;
			for (int i = 1; i < decisions.size(); i++) {
				if (decisions.get(i).remaining() < decisions.get(tightest).remaining()) {
					tightest = i;
				}
			}
			Decision decision = decisions.get(tightest);
			headers.set("X-RateLimit-Limit", Long.toString(decision.limit()));
			headers.set("X-RateLimit-Remaining", Long.toString(decision.remaining()));
			headers.set("X-RateLimit-Reset", Long.toString(seconds(decision.resetAfterNanos())));
		}
	}

	/**
	 * Writes the draft headers of a request refused for want of a permit in flight under {@code policy}:
	 * {@code "name";q=<limit>;qu="concurrent-requests"}, and none left.
	 */
	static void writeInFlight(HttpHeaders headers, RateLimitPolicy policy, long limit) {
		headers.set(POLICY, member(new StringBuilder(), policy).append(";q=")
			.append(integer(limit))
			.append(";qu=\"concurrent-requests\"")
			.toString());
		headers.set(RATE_LIMIT, member(new StringBuilder(), policy).append(";r=0").toString());
	}

	static void writeRetryAfter(HttpHeaders headers, long seconds) {
		headers.set(HttpHeaders.RETRY_AFTER, Long.toString(seconds));
	}

	/** Policy names are restricted to characters that need no escaping in an RFC 9651 string. */
	private static StringBuilder member(StringBuilder header, RateLimitPolicy policy) {
		return header.append('"').append(policy.name()).append('"');
	}

	public static long seconds(long nanos) {
		return (nanos <= 0) ? 0 : (nanos - 1) / 1_000_000_000L + 1;
	}

	private static long integer(long value) {
		return Math.min(value, MAX_INTEGER);
	}

}
