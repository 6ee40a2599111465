package dev.ratelimit.spring;

import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.StringJoiner;

import dev.ratelimit.core.Decision;
import dev.ratelimit.core.RateLimitPolicy;

import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;

/**
 * Why a request was rejected: the limits that applied to it and the store's decision under each.
 *
 * @param policies the limits that applied to the request, in declaration order
 * @param decisions the decision under each policy, in the same order, all denied
 * @param inFlight whether the request was refused because too many of its client's requests were in flight
 * under the policy ({@link RateLimited#concurrency()}), whose decision's limit is then that of requests in
 * flight, rather than by its rate
 */
public record RateLimitRejection(List<RateLimitPolicy> policies, List<Decision> decisions, boolean inFlight) {

	private static final URI ABOUT_BLANK = URI.create("about:blank");

	/**
	 * Copies the lists and checks that they match.
	 */
	public RateLimitRejection {
		policies = List.copyOf(policies);
		decisions = List.copyOf(decisions);
		if (policies.isEmpty() || policies.size() != decisions.size()) {
			throw new IllegalArgumentException("Expected one decision per policy, got " + decisions.size()
					+ " decisions for " + policies.size() + " policies");
		}
	}

	/**
	 * Creates the rejection of a request that its rates refused.
	 * @param policies the limits that applied to the request, in declaration order
	 * @param decisions the decision under each policy, in the same order, all denied
	 */
	public RateLimitRejection(List<RateLimitPolicy> policies, List<Decision> decisions) {
		this(policies, decisions, false);
	}

	/**
	 * Returns the policies that denied the request: those that would still deny it now. When stacked limits
	 * are decided together, the others denied it only because these did.
	 * @return the exceeded policies, never empty
	 */
	public List<RateLimitPolicy> exceeded() {
		List<RateLimitPolicy> exceeded = new ArrayList<>();
		for (int i = 0; i < this.policies.size(); i++) {
			if (this.decisions.get(i).retryAfterNanos() > 0) {
				exceeded.add(this.policies.get(i));
			}
		}
		return exceeded.isEmpty() ? this.policies : List.copyOf(exceeded);
	}

	/**
	 * Returns the shortest wait after which the same request would be allowed.
	 * @return the wait
	 */
	public Duration retryAfter() {
		long nanos = 0;
		for (Decision decision : this.decisions) {
			nanos = Math.max(nanos, decision.retryAfterNanos());
		}
		return Duration.ofNanos(nanos);
	}

	/**
	 * Returns the wait as written in {@code Retry-After}: whole seconds rounded up, at least 1.
	 * @return the wait in seconds
	 */
	public long retryAfterSeconds() {
		Duration wait = retryAfter();
		long seconds = wait.getSeconds() + ((wait.getNano() > 0) ? 1 : 0);
		return Math.max(1, seconds);
	}

	/**
	 * Returns the default body of a rejection: type {@code about:blank}, status 429, title "Too Many Requests", a
	 * detail naming the exceeded limits and the wait, and the names of the exceeded policies in a {@code policies} property.
	 * @return the problem
	 */
	public ProblemDetail toProblemDetail() {
		List<RateLimitPolicy> exceeded = exceeded();
		StringJoiner limits = new StringJoiner(", ");
		List<String> names = new ArrayList<>(exceeded.size());
		for (int i = 0; i < this.policies.size(); i++) {
			RateLimitPolicy policy = this.policies.get(i);
			if (!exceeded.contains(policy)) {
				continue;
			}
			Object window = (policy.calendar() != null) ? policy.calendar() : describe(policy.window());
			limits.add(this.inFlight ? this.decisions.get(i).limit() + " at once (policy '" + policy.name() + "')"
					: policy.limit() + " per " + window + " (policy '" + policy.name() + "')");
			names.add(policy.name());
		}
		long seconds = retryAfterSeconds();
		String exceededText = this.inFlight ? "Too many requests in flight: "
				: (exceeded.size() == 1) ? "Rate limit exceeded: " : "Rate limits exceeded: ";
		String detail = exceededText + limits + "; retry in " + seconds + ((seconds == 1) ? " second." : " seconds.");
		ProblemDetail problem = ProblemDetail.forStatusAndDetail(HttpStatus.TOO_MANY_REQUESTS, detail);
		problem.setType(ABOUT_BLANK);
		problem.setTitle(HttpStatus.TOO_MANY_REQUESTS.getReasonPhrase());
		problem.setProperty("policies", names);
		return problem;
	}

	private static String describe(Duration window) {
		long millis = window.toMillis();
		if (window.getNano() % 1_000_000 != 0) {
			return window.toString();
		}
		long[] units = { 86_400_000, 3_600_000, 60_000, 1000, 1 };
		String[] names = { "day", "hour", "minute", "second", "millisecond" };
		int unit = 0;
		while (millis % units[unit] != 0) {
			unit++;
		}
		long amount = millis / units[unit];
		return (amount == 1) ? names[unit] : amount + " " + names[unit] + "s";
	}

}
