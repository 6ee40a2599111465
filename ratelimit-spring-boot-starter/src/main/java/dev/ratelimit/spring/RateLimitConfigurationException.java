package dev.ratelimit.spring;

/**
 * Stops the start of an application whose rate limits are declared or configured wrongly, with a message
 * naming the declaration or property and the bad value, and what to do about it.
 */
public final class RateLimitConfigurationException extends RuntimeException {

	private final String action;

	public RateLimitConfigurationException(String description, String action) {
		super(description);
		this.action = action;
	}

	public String getAction() {
		return this.action;
	}

}
