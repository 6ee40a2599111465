/**
 * The vocabulary of rate limiting, free of any framework: a {@link dev.ratelimit.core.RateLimitPolicy} says how
 * much traffic a key may send, a {@link dev.ratelimit.core.RateLimitStore} keeps the state of every key and
 * answers each request with a {@link dev.ratelimit.core.Decision}, and a {@link dev.ratelimit.core.TimeSource}
 * tells the stores what time it is.
 */
@NullMarked
package dev.ratelimit.core;

import org.jspecify.annotations.NullMarked;
