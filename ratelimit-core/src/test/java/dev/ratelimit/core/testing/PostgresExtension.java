package dev.ratelimit.core.testing;

import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * Gives tests the run's {@link TestPostgres}, found once and closed at the end of the run. Before each test it
 * makes sure there is one: without it the test is skipped, or failed when {@code POSTGRES_REQUIRED=true}.
 * Inject {@link TestPostgres} into test, {@code @BeforeEach} or constructor parameters. A Spring test that uses
 * it closes its application context after its class, for the reason {@link RedisExtension} gives.
 */
public final class PostgresExtension implements BeforeEachCallback, ParameterResolver {

	private static final ExtensionContext.Namespace NAMESPACE = ExtensionContext.Namespace
		.create(PostgresExtension.class);

	@Override
	public void beforeEach(ExtensionContext context) {
		postgres(context);
	}

	@Override
	public boolean supportsParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
		return parameterContext.getParameter().getType() == TestPostgres.class;
	}

	@Override
	public Object resolveParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
		return postgres(extensionContext);
	}

	private static TestPostgres postgres(ExtensionContext context) {
		Found found = context.getRoot()
			.getStore(NAMESPACE)
			.computeIfAbsent(Found.class, (key) -> new Found(TestPostgres.find()), Found.class);
		if (found.value instanceof TestPostgres postgres) {
			return postgres;
		}
		TestPostgres.skipOrFail(String.valueOf(found.value));
		throw new IllegalStateException("unreachable");
	}

	/** The run's PostgreSQL, or why there is none; closed with the root context at the end of the run. */
	private record Found(Object value) implements AutoCloseable {

		@Override
		public void close() {
			if (this.value instanceof TestPostgres postgres) {
				postgres.close();
			}
		}

	}

}
