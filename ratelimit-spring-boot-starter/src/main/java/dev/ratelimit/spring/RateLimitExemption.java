package dev.ratelimit.spring;

import jakarta.servlet.http.HttpServletRequest;

/**
 * Decides whether a request is exempt from rate limiting: neither counted nor limited, and answered without
 * rate limit headers. Named by {@code ratelimit.exempt-if=bean:<name>}, or
 * {@code ratelimit.policies.<name>.exempt-if=bean:<name>} for one policy. It runs before the handler, on every
 * request to a limited endpoint, so it should be quick.
 */
@FunctionalInterface
public interface RateLimitExemption {

	/**
	 * Returns whether {@code request} is exempt.
	 * @param request the request
	 * @return true to let the request through without counting it
	 */
	boolean isExempt(HttpServletRequest request);

}
