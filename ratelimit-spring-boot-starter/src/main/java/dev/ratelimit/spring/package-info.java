/**
 * What an application writes to rate limit its endpoints: the {@link dev.ratelimit.spring.RateLimited}
 * annotation, the {@link dev.ratelimit.spring.KeyResolver} callback for keys of its own, the
 * {@link dev.ratelimit.spring.PlanResolver} callback that puts a client on a plan, the
 * {@link dev.ratelimit.spring.RateLimitExemption} callback that exempts requests, the
 * {@link dev.ratelimit.spring.RateLimitExceededHandler} that shapes the body of a rejected request from its
 * {@link dev.ratelimit.spring.RateLimitRejection}, and the {@link dev.ratelimit.spring.RateLimitConfigurationException}
 * that stops the start at a declaration or property that cannot take effect.
 */
@NullMarked
package dev.ratelimit.spring;

import org.jspecify.annotations.NullMarked;
