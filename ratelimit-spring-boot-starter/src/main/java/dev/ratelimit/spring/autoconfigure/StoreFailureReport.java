package dev.ratelimit.spring.autoconfigure;

import java.util.List;

import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.RateLimitStore;
import dev.ratelimit.spring.observability.internal.DecisionObserver;
import dev.ratelimit.spring.observability.internal.RateLimitMetrics;

import org.springframework.beans.factory.ObjectProvider;

/**
 * Counts each decision that a store's failure policy made, and each give-back its server did not carry out, in
 * the metrics, and marks the observation of the decision under way as the failure policy's.
 */
final class StoreFailureReport implements RateLimitStore.FailureListener {

	private final RateLimitMetrics metrics;

	private final ObjectProvider<DecisionObserver> observer;

	StoreFailureReport(RateLimitMetrics metrics, ObjectProvider<DecisionObserver> observer) {
		this.metrics = metrics;
		this.observer = observer;
	}

	@Override
	public void onFailure(List<RateLimitPolicy> policies, Throwable cause) {
		this.metrics.storeFailure(policies);
		this.observer.ifAvailable(DecisionObserver::failurePolicyDecided);
	}

	@Override
	public void onGiveBackFailure(List<RateLimitPolicy> policies, Throwable cause) {
		this.metrics.giveBackFailure(policies);
	}

}
