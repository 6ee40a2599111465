package dev.ratelimit.core.testing;

/**
 * Gives tests the run's {@link TestPostgres}, as {@link ServerExtension} says; {@code POSTGRES_REQUIRED} fails
 * them.
 */
public final class PostgresExtension extends ServerExtension<TestPostgres> {

	/** Gives tests the run's PostgreSQL. */
	public PostgresExtension() {
		super(TestPostgres.class, TestPostgres::find, TestPostgres::skipOrFail);
	}

}
