/**
 * The test kit, active only where spring-test is on the class path: every quota is full again before each test
 * method, on the in-memory store and, on Redis, under the store's own key prefix alone, unless the test says
 * {@link dev.ratelimit.spring.test.KeepQuotas}; {@link dev.ratelimit.spring.test.ManualClock} gives the limiters
 * a {@link dev.ratelimit.core.ManualTimeSource} that the test moves, which both stores then read, as they read
 * one that a test declares as a bean; and {@code @WebMvcTest} and {@code @WebFluxTest} apply the limits of the
 * controllers under test, on the in-memory store unless the test sets {@code ratelimit.store} itself.
 */
@NullMarked
package dev.ratelimit.spring.test;

import org.jspecify.annotations.NullMarked;
