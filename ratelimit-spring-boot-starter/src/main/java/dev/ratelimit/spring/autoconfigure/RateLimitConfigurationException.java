package dev.ratelimit.spring.autoconfigure;

/**
 * Stops the start of an application whose rate limits are declared or configured wrongly, with a message
 * naming the declaration or property and the bad value, and what to do about it.
 */
final class RateLimitConfigurationException extends RuntimeException {

	private final String action;

	RateLimitConfigurationException(String description, String action) {
		super(description);
		this.action = action;
	}

	String getAction() {
		return this.action;
	}

}
