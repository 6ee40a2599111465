package dev.ratelimit.spring;

import java.time.Duration;

import dev.ratelimit.core.Decision;
import dev.ratelimit.core.RateLimitPolicy;

import org.springframework.http.HttpHeaders;

/**
 * Thrown by a call of a bean method that {@link RateLimited} limits, when the call is over its limit: by the
 * method itself if it is blocking, as the failure of the {@code CompletableFuture} it returns, or as the error
 * of its {@code Mono} or {@code Flux}. When it leaves a web handler, on Spring MVC or WebFlux, the client gets
 * the same 429 as from a limit on the handler: {@code Retry-After}, the rate limit headers and the body of the
 * {@link RateLimitExceededHandler}.
 */
public final class RateLimitExceededException extends RuntimeException {

	private final RateLimitRejection rejection;

	private final transient HttpHeaders headers;

	/**
	 * Creates the exception of a call that {@code rejection} denied.
	 * @param rejection the limits that denied the call and their decisions
	 * @param headers the rate limit headers of the rejection, {@code Retry-After} included
	 */
	public RateLimitExceededException(RateLimitRejection rejection, HttpHeaders headers) {
		super(rejection.toProblemDetail().getDetail(), null, false, false);
		this.rejection = rejection;
		this.headers = HttpHeaders.readOnlyHttpHeaders(headers);
	}

	/**
	 * Returns the first policy that denied the call.
	 * @return the policy
	 */
	public RateLimitPolicy policy() {
		return this.rejection.exceeded().get(0);
	}

	/**
	 * Returns the decision of {@link #policy()}.
	 * @return the decision, denied
	 */
	public Decision decision() {
		return this.rejection.decisions().get(this.rejection.policies().indexOf(policy()));
	}

	/**
	 * Returns the shortest wait after which the same call would be allowed.
	 * @return the wait
	 */
	public Duration retryAfter() {
		return this.rejection.retryAfter();
	}

	/**
	 * Returns every limit of the call and its decision.
	 * @return the rejection
	 */
	public RateLimitRejection rejection() {
		return this.rejection;
	}

	/**
	 * Returns the headers a web response to the rejected call carries: {@code Retry-After}, {@code RateLimit-Policy}
	 * and {@code RateLimit}.
	 * @return the headers, read-only
	 */
	public HttpHeaders headers() {
		return this.headers;
	}

}
