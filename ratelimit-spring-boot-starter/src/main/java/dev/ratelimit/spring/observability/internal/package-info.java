/**
 * What the decisions of rate limiting tell the application's observability: Micrometer's
 * {@code ratelimit.decisions}, {@code ratelimit.decision.latency} and {@code ratelimit.near.limit}, tagged with
 * the policy, its plan and the outcome but never a key, and the {@code ratelimit.decision} observation of each
 * decision.
 * <p>
 * Internal: its types are public only so that the request path and the auto-configurations can use them. They
 * are no API, and change without notice.
 */
@NullMarked
package dev.ratelimit.spring.observability.internal;

import org.jspecify.annotations.NullMarked;
