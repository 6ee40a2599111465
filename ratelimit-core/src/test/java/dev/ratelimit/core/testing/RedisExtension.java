package dev.ratelimit.core.testing;

import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * Gives tests the run's {@link TestRedis}, found once and closed at the end of the run. Before each test it
 * makes sure there is one: without it the test is skipped, or failed when {@code REDIS_REQUIRED=true}.
 * Inject {@link TestRedis} into test, {@code @BeforeEach} or constructor parameters. A Spring test that uses it
 * closes its application context after its class ({@code @DirtiesContext}): a context left in Spring's cache
 * closes only as the JVM exits, after this Redis stopped, and would log the outage.
 */
public final class RedisExtension implements BeforeEachCallback, ParameterResolver {

	private static final ExtensionContext.Namespace NAMESPACE = ExtensionContext.Namespace
		.create(RedisExtension.class);

	@Override
	public void beforeEach(ExtensionContext context) {
		redis(context);
	}

	@Override
	public boolean supportsParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
		return parameterContext.getParameter().getType() == TestRedis.class;
	}

	@Override
	public Object resolveParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
		return redis(extensionContext);
	}

	private static TestRedis redis(ExtensionContext context) {
		Found found = context.getRoot()
			.getStore(NAMESPACE)
			.computeIfAbsent(Found.class, (key) -> new Found(TestRedis.find()), Found.class);
		if (found.value instanceof TestRedis redis) {
			return redis;
		}
		TestRedis.skipOrFail(String.valueOf(found.value));
		throw new IllegalStateException("unreachable");
	}

	/** The run's Redis, or why there is none; closed with the root context at the end of the run. */
	private record Found(Object value) implements AutoCloseable {

		@Override
		public void close() {
			if (this.value instanceof TestRedis redis) {
				redis.close();
			}
		}

	}

}
