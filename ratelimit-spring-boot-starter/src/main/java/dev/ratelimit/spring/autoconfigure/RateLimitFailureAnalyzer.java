package dev.ratelimit.spring.autoconfigure;

import dev.ratelimit.spring.RateLimitConfigurationException;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Reports a {@link RateLimitConfigurationException} as a plain description and action instead of a stack
 * trace.
 */
final class RateLimitFailureAnalyzer extends AbstractFailureAnalyzer<RateLimitConfigurationException> {

	@Override
	protected FailureAnalysis analyze(Throwable rootFailure, RateLimitConfigurationException cause) {
		return new FailureAnalysis(cause.getMessage(), cause.getAction(), cause);
	}

}
