/**
 * Rate limiting on Spring WebFlux, from the same annotation and properties as on Spring MVC: a handler adapter
 * that decides limited handlers without blocking, a {@code WebFilter} for the rules marked
 * {@code before-security}, the exchange's view of a request, the reactive resolver and handler interfaces, and
 * their auto-configuration for reactive web applications.
 */
@NullMarked
package dev.ratelimit.spring.webflux;

import org.jspecify.annotations.NullMarked;
