/**
 * The decision path that every web stack shares: finding an endpoint's limits from {@code @RateLimited} and
 * {@code ratelimit.rules}, computing keys, exemptions, plans and costs over a {@link LimitedRequest}, deciding
 * in the store, and telling the stack in a verdict which headers, rejection or delay apply; metrics, the shadow
 * log and the policies changed at runtime live here too, and so does the reading of a client address on a
 * servlet container, which serves Spring MVC and WebFlux on Tomcat alike. Its types are public for the stacks'
 * adapters and the auto-configurations, not as an API of their own.
 */
@NullMarked
package dev.ratelimit.spring.web;

import org.jspecify.annotations.NullMarked;
