package dev.ratelimit.spring.test;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import dev.ratelimit.core.ManualTimeSource;

/**
 * Gives the rate limiters of a test's application context a {@link ManualTimeSource} bean as their clock, standing
 * at zero, which the test injects and moves instead of sleeping:
 * <pre class="code">
 * &#064;WebMvcTest(OrderController.class)
 * &#064;ManualClock
 * class OrderControllerTests {
 *
 *     &#064;Autowired
 *     ManualTimeSource clock;
 *
 *     &#064;Test
 *     void servesAgainAnHourLater() {
 *         ...
 *         this.clock.advance(Duration.ofHours(1));
 *         ...
 *     }
 *
 * }
 * </pre>
 * The in-memory store reads it, and so does the Redis store instead of Redis' {@code TIME}, as they read a
 * {@link ManualTimeSource} bean that the test declares itself; a test does one or the other. The clock is the
 * application context's, shared by every test method that uses the context, and never moves back.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Inherited
public @interface ManualClock {

}
