/**
 * The limits of bean methods: a post-processor that advises every bean whose class or methods declare
 * {@link dev.ratelimit.spring.RateLimited}, controllers apart, and the interceptor that decides each call through
 * the request path, throwing {@link dev.ratelimit.spring.RateLimitExceededException} over the limit, or failing
 * the {@code CompletableFuture}, {@code Mono} or {@code Flux} it returns with it.
 * <p>
 * Internal: its types are public only so that the auto-configuration can use them. They are no API, and change
 * without notice.
 */
@NullMarked
package dev.ratelimit.spring.method.internal;

import org.jspecify.annotations.NullMarked;
