/**
 * Auto-configuration of rate limiting: the store, the {@code ratelimit.*} properties and, in servlet web
 * applications, the interceptor that enforces {@link dev.ratelimit.spring.RateLimited} and
 * {@code ratelimit.rules} on Spring MVC handlers.
 */
@NullMarked
package dev.ratelimit.spring.autoconfigure;

import org.jspecify.annotations.NullMarked;
