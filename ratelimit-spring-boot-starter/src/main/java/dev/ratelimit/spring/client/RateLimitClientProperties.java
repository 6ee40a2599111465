package dev.ratelimit.spring.client;

import java.time.Duration;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Configuration properties of the client side, under {@code ratelimit.client}: how the auto-configured
 * {@link RateLimitClientInterceptor} retries and paces requests.
 */
@ConfigurationProperties("ratelimit.client")
public class RateLimitClientProperties {

	/**
	 * Whether to make auto-configured RestClient and RestTemplate builders wait and retry when a server rate
	 * limits them.
	 */
	private boolean enabled;

	/**
	 * Backoff before the first retry of a 429 response without Retry-After. It doubles with each further
	 * retry, and the actual wait is drawn at random between zero and that value.
	 */
	private Duration baseDelay = Duration.ofSeconds(1);

	/**
	 * Upper bound of one backoff.
	 */
	private Duration maxDelay = Duration.ofSeconds(30);

	/**
	 * Maximum number of requests sent for one call, the first one included.
	 */
	private int maxAttempts = 3;

	/**
	 * Maximum time one call may spend waiting, pacing and retries together. A response whose Retry-After
	 * would go beyond it is returned to the caller without waiting.
	 */
	private Duration maxTotalWait = Duration.ofSeconds(30);

	/**
	 * Whether to retry methods that are not idempotent, such as POST and PATCH.
	 */
	private boolean retryNonIdempotent;

	/**
	 * Whether to delay a call to a host whose last RateLimit response field reported an exhausted quota until
	 * the quota returns, instead of sending a request that would be rejected.
	 */
	private boolean pace = true;

	public boolean isEnabled() {
		return this.enabled;
	}

	public void setEnabled(boolean enabled) {
		this.enabled = enabled;
	}

	public Duration getBaseDelay() {
		return this.baseDelay;
	}

	public void setBaseDelay(Duration baseDelay) {
		this.baseDelay = baseDelay;
	}

	public Duration getMaxDelay() {
		return this.maxDelay;
	}

	public void setMaxDelay(Duration maxDelay) {
		this.maxDelay = maxDelay;
	}

	public int getMaxAttempts() {
		return this.maxAttempts;
	}

	public void setMaxAttempts(int maxAttempts) {
		this.maxAttempts = maxAttempts;
	}

	public Duration getMaxTotalWait() {
		return this.maxTotalWait;
	}

	public void setMaxTotalWait(Duration maxTotalWait) {
		this.maxTotalWait = maxTotalWait;
	}

	public boolean isRetryNonIdempotent() {
		return this.retryNonIdempotent;
	}

	public void setRetryNonIdempotent(boolean retryNonIdempotent) {
		this.retryNonIdempotent = retryNonIdempotent;
	}

	public boolean isPace() {
		return this.pace;
	}

	public void setPace(boolean pace) {
		this.pace = pace;
	}

}
