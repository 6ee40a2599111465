package dev.ratelimit.spring.client;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.URI;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.random.RandomGenerator;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import org.springframework.http.HttpRequest;
import org.springframework.http.client.ClientHttpRequestExecution;
import org.springframework.http.client.ClientHttpRequestInterceptor;
import org.springframework.http.client.ClientHttpResponse;
import org.springframework.util.Assert;

/**
 * A {@link ClientHttpRequestInterceptor} that makes a client wait as a rate-limited server asks, for
 * {@code RestClient} ({@code builder.requestInterceptor(interceptor)}) and {@code RestTemplate}
 * ({@code restTemplate.getInterceptors().add(interceptor)}).
 * <p>
 * A {@code 429 Too Many Requests} response, or a {@code 503 Service Unavailable} carrying {@code Retry-After}, is
 * retried:
 * <ul>
 * <li>after the time that {@code Retry-After} gives, as delta-seconds or as an HTTP-date (measured against the
 * {@link Builder#clock(Clock) clock}); a malformed value counts as absent;</li>
 * <li>without {@code Retry-After} (429 only), after an exponential backoff with full jitter: before retry
 * {@code n} (1 for the first) the wait is drawn uniformly from {@code [0, min(maxDelay, baseDelay * 2^(n-1))]},
 * so that many clients do not come back at the same instant.</li>
 * </ul>
 * At most {@link Builder#maxAttempts(int) maxAttempts} requests are sent for one call, the first included, and
 * the waits for one call add up to at most {@link Builder#maxTotalWait(Duration) maxTotalWait}: a
 * {@code Retry-After} that does not fit is not waited for, and a backoff is shortened to fit. When a response is
 * not retried, the last one is returned to the caller as it is, and the caller's usual error handling applies.
 * A response that is retried is closed first, so its connection is released.
 * <p>
 * Only idempotent methods (GET, HEAD, OPTIONS, PUT, DELETE, TRACE) are retried unless
 * {@link Builder#retryNonIdempotent(boolean) retryNonIdempotent} is set, since sending one of the others twice
 * may repeat its effect. The body is sent again as it is: an interceptor always receives it fully buffered as a
 * byte array, so every retry replays the same bytes.
 * <p>
 * With {@link Builder#pace(boolean) pacing} on (the default), a response whose {@code RateLimit} field (IETF
 * draft "RateLimit header fields for HTTP", for example {@code "default";r=0;t=10}) reports an exhausted quota
 * makes the next call to the same scheme, host and port wait until the quota returns before sending, instead of
 * spending a request on a certain 429. That wait counts toward {@code maxTotalWait}; when it does not fit, the
 * request is sent at once and the server decides.
 * <p>
 * Time, sleeping and randomness are injectable, so tests can assert exact waits. Instances are thread-safe and
 * meant to be shared.
 */
public final class RateLimitClientInterceptor implements ClientHttpRequestInterceptor {

	private static final Log logger = LogFactory.getLog(RateLimitClientInterceptor.class);

	private static final Set<HttpMethod> IDEMPOTENT_METHODS = Set.of(HttpMethod.GET, HttpMethod.HEAD,
			HttpMethod.OPTIONS, HttpMethod.PUT, HttpMethod.DELETE, HttpMethod.TRACE);

	private static final String RATE_LIMIT = "RateLimit";

	/** Hosts remembered for pacing beyond which expired entries are swept on the next write. */
	private static final int PACING_SWEEP_THRESHOLD = 256;

	private final long baseDelayNanos;

	private final long maxDelayNanos;

	private final int maxAttempts;

	private final Duration maxTotalWait;

	private final boolean retryNonIdempotent;

	private final boolean pace;

	private final Clock clock;

	private final Sleeper sleeper;

	private final @Nullable RandomGenerator random;

	private final Map<String, Instant> exhaustedUntil = new ConcurrentHashMap<>();

	private RateLimitClientInterceptor(Builder builder) {
		this.baseDelayNanos = saturatedNanos(builder.baseDelay);
		this.maxDelayNanos = saturatedNanos(builder.maxDelay);
		this.maxAttempts = builder.maxAttempts;
		this.maxTotalWait = builder.maxTotalWait;
		this.retryNonIdempotent = builder.retryNonIdempotent;
		this.pace = builder.pace;
		this.clock = builder.clock;
		this.sleeper = builder.sleeper;
		this.random = builder.random;
	}

	/**
	 * Returns a builder with the defaults: base delay 1 s, maximum delay 30 s, 3 attempts, 30 s of total wait,
	 * idempotent methods only, pacing on, the system clock, real sleeping and thread-local randomness.
	 * @return a new builder
	 */
	public static Builder builder() {
		return new Builder();
	}

	@Override
	public ClientHttpResponse intercept(HttpRequest request, byte[] body, ClientHttpRequestExecution execution)
			throws IOException {
		String origin = origin(request.getURI());
		Duration waited = awaitQuota(origin, request);
		boolean retryable = this.retryNonIdempotent || IDEMPOTENT_METHODS.contains(request.getMethod());
		for (int attempt = 1;; attempt++) {
			ClientHttpResponse response = execution.execute(request, body);
			rememberQuota(origin, response.getHeaders());
			if (!retryable || attempt >= this.maxAttempts) {
				return response;
			}
			Duration wait = retryWait(response, attempt, this.maxTotalWait.minus(waited));
			if (wait == null) {
				return response;
			}
			response.close();
			if (logger.isDebugEnabled()) {
				logger.debug("Retrying " + request.getMethod() + " " + request.getURI() + " in " + wait
						+ " (attempt " + (attempt + 1) + " of " + this.maxAttempts + ")");
			}
			sleep(wait, request);
			waited = waited.plus(wait);
		}
	}

	private Duration awaitQuota(String origin, HttpRequest request) throws IOException {
		if (!this.pace) {
			return Duration.ZERO;
		}
		Instant until = this.exhaustedUntil.get(origin);
		if (until == null) {
			return Duration.ZERO;
		}
		Duration wait = Duration.between(this.clock.instant(), until);
		if (wait.isNegative() || wait.isZero()) {
			this.exhaustedUntil.remove(origin, until);
			return Duration.ZERO;
		}
		if (wait.compareTo(this.maxTotalWait) > 0) {
			return Duration.ZERO;
		}
		if (logger.isDebugEnabled()) {
			logger.debug("Delaying " + request.getMethod() + " " + request.getURI() + " by " + wait
					+ " until the quota of " + origin + " returns");
		}
		sleep(wait, request);
		return wait;
	}

	private void rememberQuota(String origin, HttpHeaders headers) {
		if (!this.pace) {
			return;
		}
		List<String> lines = headers.get(RATE_LIMIT);
		Duration reset = (lines != null) ? RateLimitField.exhaustedFor(lines) : null;
		if (reset == null || reset.isZero()) {
			return;
		}
		Instant now = this.clock.instant();
		if (this.exhaustedUntil.size() >= PACING_SWEEP_THRESHOLD) {
			this.exhaustedUntil.values().removeIf((until) -> !until.isAfter(now));
		}
		this.exhaustedUntil.put(origin, now.plus(reset));
	}

	private @Nullable Duration retryWait(ClientHttpResponse response, int attempt, Duration budget)
			throws IOException {
		int status = response.getStatusCode().value();
		if (status != 429 && status != 503) {
			return null;
		}
		Duration retryAfter = RetryAfter.parse(response.getHeaders().getFirst(HttpHeaders.RETRY_AFTER),
				this.clock.instant());
		if (retryAfter != null) {
			return (retryAfter.compareTo(budget) <= 0) ? retryAfter : null;
		}
		if (status == 503 || budget.isNegative() || budget.isZero()) {
			return null;
		}
		return Duration.ofNanos(jitter(Math.min(backoffCeiling(attempt), saturatedNanos(budget))));
	}

	/** {@code min(maxDelay, baseDelay * 2^(attempt-1))} without overflowing. */
	private long backoffCeiling(int attempt) {
		int doublings = attempt - 1;
		if (doublings >= Long.SIZE - 1 || this.baseDelayNanos > (this.maxDelayNanos >> doublings)) {
			return this.maxDelayNanos;
		}
		return this.baseDelayNanos << doublings;
	}

	/** A uniform draw from {@code [0, ceiling]}. */
	private long jitter(long ceiling) {
		RandomGenerator random = (this.random != null) ? this.random : ThreadLocalRandom.current();
		return (ceiling == Long.MAX_VALUE) ? random.nextLong(ceiling) : random.nextLong(ceiling + 1);
	}

	private void sleep(Duration wait, HttpRequest request) throws IOException {
		if (wait.isZero()) {
			return;
		}
		try {
			this.sleeper.sleep(wait);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			InterruptedIOException interrupted = new InterruptedIOException(
					"Interrupted while waiting to send " + request.getMethod() + " " + request.getURI());
			interrupted.initCause(ex);
			throw interrupted;
		}
	}

	private static String origin(URI uri) {
		String scheme = (uri.getScheme() != null) ? uri.getScheme().toLowerCase(Locale.ROOT) : "";
		String host = (uri.getHost() != null) ? uri.getHost().toLowerCase(Locale.ROOT) : "";
		int port = uri.getPort();
		if (port == -1) {
			port = switch (scheme) {
				case "http" -> 80;
				case "https" -> 443;
				default -> -1;
			};
		}
		return scheme + "://" + host + ":" + port;
	}

	private static long saturatedNanos(Duration duration) {
		try {
			return duration.toNanos();
		}
		catch (ArithmeticException ex) {
			return Long.MAX_VALUE;
		}
	}

	/**
	 * Waits for a given time. The default {@link #system()} sleeper blocks the calling thread; tests pass one
	 * that records each wait and moves a clock instead.
	 */
	@FunctionalInterface
	public interface Sleeper {

		/**
		 * Waits for the given time.
		 * @param duration how long to wait, always positive
		 * @throws InterruptedException if the waiting thread is interrupted
		 */
		void sleep(Duration duration) throws InterruptedException;

		/**
		 * Returns a sleeper that blocks the calling thread.
		 * @return the sleeper backed by {@link TimeUnit#sleep(long)}
		 */
		static Sleeper system() {
			return (duration) -> TimeUnit.NANOSECONDS.sleep(saturatedNanos(duration));
		}

	}

	/**
	 * Builds a {@link RateLimitClientInterceptor}. Every setting has a default, see
	 * {@link RateLimitClientInterceptor#builder()}.
	 */
	public static final class Builder {

		private Duration baseDelay = Duration.ofSeconds(1);

		private Duration maxDelay = Duration.ofSeconds(30);

		private int maxAttempts = 3;

		private Duration maxTotalWait = Duration.ofSeconds(30);

		private boolean retryNonIdempotent;

		private boolean pace = true;

		private Clock clock = Clock.systemUTC();

		private Sleeper sleeper = Sleeper.system();

		private @Nullable RandomGenerator random;

		private Builder() {
		}

		/**
		 * Sets the backoff before the first retry of a response without {@code Retry-After}; it doubles with
		 * each further retry.
		 * @param baseDelay a positive duration
		 * @return this builder
		 */
		public Builder baseDelay(Duration baseDelay) {
			Assert.isTrue(isPositive(baseDelay), "baseDelay must be positive");
			this.baseDelay = baseDelay;
			return this;
		}

		/**
		 * Sets the upper bound of one backoff, the cap of the exponential growth.
		 * @param maxDelay a positive duration
		 * @return this builder
		 */
		public Builder maxDelay(Duration maxDelay) {
			Assert.isTrue(isPositive(maxDelay), "maxDelay must be positive");
			this.maxDelay = maxDelay;
			return this;
		}

		/**
		 * Sets how many requests at most are sent for one call, the first one included.
		 * @param maxAttempts at least 1; 1 disables retries and leaves only pacing
		 * @return this builder
		 */
		public Builder maxAttempts(int maxAttempts) {
			Assert.isTrue(maxAttempts >= 1, "maxAttempts must be at least 1");
			this.maxAttempts = maxAttempts;
			return this;
		}

		/**
		 * Sets how long one call may wait in all, pacing and retries together. A {@code Retry-After} that
		 * would go beyond it is not waited for: the response is returned to the caller.
		 * @param maxTotalWait zero or a positive duration
		 * @return this builder
		 */
		public Builder maxTotalWait(Duration maxTotalWait) {
			Assert.isTrue(maxTotalWait != null && !maxTotalWait.isNegative(),
					"maxTotalWait must not be negative");
			this.maxTotalWait = maxTotalWait;
			return this;
		}

		/**
		 * Sets whether methods that are not idempotent, such as POST and PATCH, are retried too.
		 * @param retryNonIdempotent whether to retry every method
		 * @return this builder
		 */
		public Builder retryNonIdempotent(boolean retryNonIdempotent) {
			this.retryNonIdempotent = retryNonIdempotent;
			return this;
		}

		/**
		 * Sets whether a call waits first when an earlier response from the same host reported an exhausted
		 * quota in its {@code RateLimit} field.
		 * @param pace whether to pace
		 * @return this builder
		 */
		public Builder pace(boolean pace) {
			this.pace = pace;
			return this;
		}

		/**
		 * Sets the clock that HTTP-dates and remembered quotas are measured against.
		 * @param clock the clock
		 * @return this builder
		 */
		public Builder clock(Clock clock) {
			Assert.notNull(clock, "clock must not be null");
			this.clock = clock;
			return this;
		}

		/**
		 * Sets how to wait.
		 * @param sleeper the sleeper
		 * @return this builder
		 */
		public Builder sleeper(Sleeper sleeper) {
			Assert.notNull(sleeper, "sleeper must not be null");
			this.sleeper = sleeper;
			return this;
		}

		/**
		 * Sets the source of the backoff jitter, which must be thread-safe if the interceptor is shared
		 * between threads; by default each thread uses its {@link ThreadLocalRandom}.
		 * @param random the random generator
		 * @return this builder
		 */
		public Builder random(RandomGenerator random) {
			Assert.notNull(random, "random must not be null");
			this.random = random;
			return this;
		}

		/**
		 * Builds the interceptor.
		 * @return a new interceptor
		 * @throws IllegalStateException if {@code baseDelay} is greater than {@code maxDelay}
		 */
		public RateLimitClientInterceptor build() {
			Assert.state(this.baseDelay.compareTo(this.maxDelay) <= 0, "baseDelay must not be greater than maxDelay");
			return new RateLimitClientInterceptor(this);
		}

		private static boolean isPositive(@Nullable Duration duration) {
			return duration != null && !duration.isNegative() && !duration.isZero();
		}

	}

}
