/**
 * Auto-configuration of rate limiting: the store, the {@code ratelimit.*} properties and their checks, metrics,
 * health, observations and the Actuator endpoint. The properties are bound and mapped here, once, into the plain
 * values the request path reads; nothing past this package sees a properties class. The web stacks' own
 * auto-configurations live with their adapters, in {@code dev.ratelimit.spring.webmvc} and
 * {@code dev.ratelimit.spring.webflux}.
 */
@NullMarked
package dev.ratelimit.spring.autoconfigure;

import org.jspecify.annotations.NullMarked;
