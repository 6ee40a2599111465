package dev.ratelimit.spring.observability.internal;

import java.util.List;

import dev.ratelimit.core.Decision;
import dev.ratelimit.core.RateLimitPolicy;

/**
 * Records the outcome and latency of every decision, never the key.
 */
public interface RateLimitMetrics {

	/** Records nothing, for applications without Micrometer. */
	RateLimitMetrics NONE = new RateLimitMetrics() {

		@Override
		public void record(List<RateLimitPolicy> policies, Outcome outcome, long nanos) {
		}

		@Override
		public void storeFailure(List<RateLimitPolicy> policies) {
		}

		@Override
		public void exempt(List<RateLimitPolicy> policies) {
		}

		@Override
		public void giveBackFailure(List<RateLimitPolicy> policies) {
		}

		@Override
		public void admitted(List<RateLimitPolicy> policies, List<Decision> decisions) {
		}

	};

	/**
	 * Records one request decided under {@code policies} together.
	 * @param policies the policies that applied
	 * @param outcome what became of the request
	 * @param nanos how long the store took to decide
	 */
	void record(List<RateLimitPolicy> policies, Outcome outcome, long nanos);

	/**
	 * Records one decision that the store's failure policy made because Redis did not.
	 * @param policies the policies of the decision
	 */
	void storeFailure(List<RateLimitPolicy> policies);

	/**
	 * Records one request that an exemption let through without a decision.
	 * @param policies the policies it was exempt from
	 */
	void exempt(List<RateLimitPolicy> policies);

	/**
	 * Records one give-back that the store did not carry out, for a request whose outcome did not count: its
	 * permits stay taken.
	 * @param policies the policies whose permits stay taken
	 */
	void giveBackFailure(List<RateLimitPolicy> policies);

	/**
	 * Records the decisions of one request that its limits admitted, at once or delayed, to count those that
	 * left their key near the limit.
	 * @param policies the policies that applied
	 * @param decisions their decisions, in the same order
	 */
	void admitted(List<RateLimitPolicy> policies, List<Decision> decisions);

	/**
	 * Records that a request took ({@code +1}) or gave back ({@code -1}) a permit in flight under {@code policy}.
	 * @param policy the policy that limits the requests in flight
	 * @param change the change in the permits held
	 */
	default void inFlight(RateLimitPolicy policy, int change) {
	}

	/**
	 * What became of a request, as nginx's {@code $limit_req_status} tells {@code PASSED}, {@code DELAYED} and
	 * {@code REJECTED} apart.
	 */
	enum Outcome {

		/** Passed at once. */
		ALLOWED,

		/** Admitted into a leaky bucket's queue and held until its slot. */
		DELAYED,

		/** Rejected with 429. */
		REJECTED,

		/** Let through at once, though a policy in shadow mode would have rejected it. */
		SHADOW_REJECTED,

		/** Let through at once, though a policy in shadow mode would have held it until its slot. */
		SHADOW_DELAYED;

		/**
		 * Returns what becomes of a request with these decisions of its enforced policies: the first tells whether
		 * its limits admit it, and only a leaky bucket delays it.
		 * @param decisions the decisions of one request's policies
		 * @return {@link #REJECTED}, {@link #DELAYED} or {@link #ALLOWED}
		 */
		public static Outcome of(List<Decision> decisions) {
			if (!decisions.get(0).allowed()) {
				return REJECTED;
			}
			for (Decision decision : decisions) {
				if (decision.delayNanos() > 0) {
					return DELAYED;
				}
			}
			return ALLOWED;
		}

	}

}
