package dev.ratelimit.spring.autoconfigure;

import java.util.List;

import dev.ratelimit.core.RateLimitPolicy;

/**
 * The limits applying together to one endpoint, ready for the hot path: nothing is parsed or looked up per
 * request.
 *
 * @param policies the stacked policies, at least one, with distinct names
 * @param origins where each policy was declared and overridden, in the order of the policies, for the startup
 * log
 * @param keySpecs each policy's key as declared, such as {@code ip} or {@code global}, for the startup log
 * @param keys computes the key each policy is decided under, in the order of the policies; policies declared
 * with the same key share one source, computed once per request
 * @param address the client address as the endpoint keys it, which a key falls back to
 * @param exemption when a request is exempt from the endpoint's limits
 * @param counted which outcomes of a request count against the limits
 * @param policyHeader the value of the {@code RateLimit-Policy} response header
 */
record EndpointLimits(List<RateLimitPolicy> policies, List<String> origins, List<String> keySpecs,
		List<KeySource> keys, AddressKey address, Exemption exemption, CountedOutcomes counted, String policyHeader) {

	EndpointLimits(List<RateLimitPolicy> policies, List<String> origins, List<String> keySpecs, List<KeySource> keys,
			AddressKey address, Exemption exemption, CountedOutcomes counted) {
		this(List.copyOf(policies), List.copyOf(origins), List.copyOf(keySpecs), List.copyOf(keys), address,
				exemption, counted, RateLimitHeaders.policy(policies));
	}

}
