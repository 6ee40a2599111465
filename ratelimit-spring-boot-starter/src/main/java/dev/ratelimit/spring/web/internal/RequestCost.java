package dev.ratelimit.spring.web.internal;

import java.math.BigInteger;
import java.net.URI;
import java.util.List;
import java.util.Map;
import java.util.function.BiFunction;

import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.TimeSource;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.expression.Expression;
import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;

/**
 * Computes the cost of a request from a declaration's cost expression. A cost must be a whole number from 1 to
 * the policy's capacity: any other, and an expression that fails, makes the request a bad one, answered with
 * 400 before anything is taken, and the log gets at most one WARN line per endpoint per minute. Under a policy
 * in shadow mode the request proceeds instead, counted as one that the policy would have rejected.
 */
final class RequestCost {

	private static final Log logger = LogFactory.getLog(RequestDecisions.class);

	private static final URI ABOUT_BLANK = URI.create("about:blank");

	private final String text;

	private final BiFunction<LimitedRequest, Map<String, String>, @Nullable Object> evaluated;

	private final ThrottledWarning warning;

	private final boolean shadow;


	RequestCost(Expression expression, List<ParameterBinding> bindings, AddressKey address, TimeSource time,
			boolean shadow) {
		this.text = expression.getExpressionString();
		this.evaluated = KeySource.evaluator(expression, bindings, address);
		this.warning = new ThrottledWarning(logger, time);
		this.shadow = shadow;
	}

	/** Returns the expression as declared. */
	String text() {
		return this.text;
	}

	/**
	 * Returns {@code policy} at the cost of {@code request}.
	 * @throws InvalidCost if the cost is not a whole number from 1 to the policy's capacity
	 */
	RateLimitPolicy policy(RateLimitPolicy policy, LimitedRequest request, Map<String, String> uriVariables) {
		Object value;
		try {
			value = this.evaluated.apply(request, uriVariables);
		}
		catch (RuntimeException ex) {
			throw invalid(policy, request, "could not be computed", ex.toString());
		}
		Long cost = wholeNumber(value);
		if (cost == null || cost < 1) {
			throw invalid(policy, request, "is '" + value + "', not a positive whole number", null);
		}
		if (cost > policy.capacity()) {
			throw invalid(policy, request, "is " + cost + ", more than the " + policy.capacity()
					+ " permits the policy can ever hold, so the request could never pass", null);
		}
		return (cost == policy.cost()) ? policy : policy.withCost(cost);
	}

	private static @Nullable Long wholeNumber(@Nullable Object value) {
		if (value instanceof Long || value instanceof Integer || value instanceof Short || value instanceof Byte) {
			return ((Number) value).longValue();
		}
		if (value instanceof BigInteger big) {
			return (big.bitLength() < Long.SIZE) ? big.longValue() : null;
		}
		if (value instanceof String text) {
			try {
				return Long.parseLong(text.trim());
			}
			catch (NumberFormatException ex) {
				return null;
			}
		}
		return null;
	}

	private InvalidCost invalid(RateLimitPolicy policy, LimitedRequest request, String problem,
			@Nullable String cause) {
		String detail = "The cost of this request under policy '" + policy.name() + "' " + problem + ".";
		this.warning.warn(() -> "Cost '" + this.text + "' of " + policy.name() + " for " + request.describe() + " "
				+ problem + ((cause != null) ? " (" + cause + ")" : "")
				+ (this.shadow ? ": would be answered with 400, let through in shadow mode" : ": answered with 400"));
		ProblemDetail body = ProblemDetail.forStatusAndDetail(HttpStatus.BAD_REQUEST, detail);
		body.setType(ABOUT_BLANK);
		body.setTitle(HttpStatus.BAD_REQUEST.getReasonPhrase());
		body.setProperty("policies", List.of(policy.name()));
		return new InvalidCost(body);
	}

	/** A request whose cost is not one its policy can take: it is answered with the problem and takes nothing. */
	static final class InvalidCost extends RuntimeException {

		private final transient ProblemDetail problem;

		InvalidCost(ProblemDetail problem) {
			super(problem.getDetail(), null, false, false);
			this.problem = problem;
		}

		ProblemDetail problem() {
			return this.problem;
		}

	}

}
