/**
 * The client side of rate limiting: a {@link dev.ratelimit.spring.client.RateLimitClientInterceptor} that makes
 * {@code RestClient} and {@code RestTemplate} wait as a rate-limited server asks (honouring {@code Retry-After},
 * otherwise backing off exponentially with jitter, and pacing requests when a {@code RateLimit} field reports an
 * exhausted quota), and the auto-configuration that applies it to Spring Boot's client builders when
 * {@code ratelimit.client.enabled} is set.
 */
@NullMarked
package dev.ratelimit.spring.client;

import org.jspecify.annotations.NullMarked;
