/**
 * Operating limits through Spring Boot Actuator: the {@code ratelimit} endpoint, which lists, inspects, resets
 * and changes limits, and the {@code ratelimit} health contributor.
 */
@NullMarked
package dev.ratelimit.spring.actuate;

import org.jspecify.annotations.NullMarked;
