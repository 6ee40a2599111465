package dev.ratelimit.spring.test;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Keeps the quotas that earlier test methods used: on a test method, it starts with what the methods before it
 * left; on a test class, its methods share their quotas, the first of them starting with every limit full. Without
 * it, the test kit resets every quota of the application context's store before each test method.
 * <p>
 * A test that checks what several requests across methods add up to, in a fixed order, keeps its quotas:
 * <pre class="code">
 * &#064;SpringBootTest
 * &#064;AutoConfigureMockMvc
 * &#064;KeepQuotas
 * &#064;TestMethodOrder(MethodOrderer.OrderAnnotation.class)
 * class HourlyQuotaTests {
 *     ...
 * }
 * </pre>
 */
@Target({ ElementType.TYPE, ElementType.METHOD })
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Inherited
public @interface KeepQuotas {

}
