/**
 * Auto-configuration of rate limiting: the store, the {@code ratelimit.*} properties and their checks, metrics,
 * health, observations and the Actuator endpoint. The web stacks' own auto-configurations live with their
 * adapters, in {@code dev.ratelimit.spring.webmvc}.
 */
@NullMarked
package dev.ratelimit.spring.autoconfigure;

import org.jspecify.annotations.NullMarked;
