/**
 * What an application writes to rate limit its endpoints: the {@link dev.ratelimit.spring.RateLimited}
 * annotation, the {@link dev.ratelimit.spring.KeyResolver} callback for keys of its own, the
 * {@link dev.ratelimit.spring.PlanResolver} callback that puts a client on a plan, the
 * {@link dev.ratelimit.spring.RateLimitExemption} callback that exempts requests, and the
 * {@link dev.ratelimit.spring.RateLimitExceededHandler} that shapes the body of a rejected request.
 */
@NullMarked
package dev.ratelimit.spring;

import org.jspecify.annotations.NullMarked;
