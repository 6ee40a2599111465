package dev.ratelimit.spring.autoconfigure;

import java.util.List;

import dev.ratelimit.core.RateLimitPolicy;

/**
 * Records the outcome and latency of every decision, never the key.
 */
interface RateLimitMetrics {

	/** Records nothing, for applications without Micrometer. */
	RateLimitMetrics NONE = new RateLimitMetrics() {

		@Override
		public void record(List<RateLimitPolicy> policies, boolean allowed, long nanos) {
		}

		@Override
		public void storeFailure(List<RateLimitPolicy> policies) {
		}

	};

	/**
	 * Records one request decided under {@code policies} together.
	 * @param policies the policies that applied
	 * @param allowed whether the request was allowed
	 * @param nanos how long the store took to decide
	 */
	void record(List<RateLimitPolicy> policies, boolean allowed, long nanos);

	/**
	 * Records one decision that the store's failure policy made because Redis did not.
	 * @param policies the policies of the decision
	 */
	void storeFailure(List<RateLimitPolicy> policies);

}
