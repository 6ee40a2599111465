/**
 * Rate limiting on Spring MVC: the interceptor that decides limited handlers, the servlet filter that decides
 * the rules marked {@code before-security}, the servlet view of a request, the holding of requests that a leaky
 * bucket delays, and their auto-configuration for servlet web applications.
 */
@NullMarked
package dev.ratelimit.spring.webmvc;

import org.jspecify.annotations.NullMarked;
