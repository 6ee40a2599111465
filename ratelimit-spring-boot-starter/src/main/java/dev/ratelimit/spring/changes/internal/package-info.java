/**
 * The runtime changes of policies: a policy's limit, window and burst changed while the application runs, from
 * the next request on, validated like configuration, and shared with the fleet on a store that shares changes.
 * The Actuator endpoint makes them; the request path reads them as the limits in force.
 * <p>
 * Internal: its types are public only so that the Actuator endpoint and the auto-configurations can use them.
 * They are no API, and change without notice.
 */
@NullMarked
package dev.ratelimit.spring.changes.internal;

import org.jspecify.annotations.NullMarked;
