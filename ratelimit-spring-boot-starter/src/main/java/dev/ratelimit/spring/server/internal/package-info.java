/**
 * Hooks into the servlet containers that record what a connection delivered (the socket peer and the
 * forwarding headers as received) before a container's own forwarded-header support rewrites them: a valve on
 * Tomcat and a request customizer on Jetty, on Spring MVC and on WebFlux alike, so that the client address that
 * keys a limit trusts only the proxies it was told to.
 * <p>
 * Internal: its types are public only so that the web stacks and the auto-configurations can use them. They are
 * no API, and change without notice.
 */
@NullMarked
package dev.ratelimit.spring.server.internal;

import org.jspecify.annotations.NullMarked;
