/**
 * The request path that every web stack shares, and nothing else: finding an endpoint's limits from
 * {@code @RateLimited} and {@code ratelimit.rules} (one class per kind of declaration: annotations, rules, plans,
 * costs, keys, exemptions, names), computing keys, exemptions, plans and costs over a {@link
 * dev.ratelimit.spring.web.internal.LimitedRequest}, deciding in the store, and telling the stack in a verdict which
 * headers, rejection or delay apply. It reads plain values ({@link dev.ratelimit.spring.web.internal.LimitSettings}),
 * never a properties class, and the store through its port only.
 * <p>
 * Internal: its types are public only so that the stacks' adapters, the operations and the auto-configurations
 * can use them. They are no API, and change without notice.
 */
@NullMarked
package dev.ratelimit.spring.web.internal;

import org.jspecify.annotations.NullMarked;
