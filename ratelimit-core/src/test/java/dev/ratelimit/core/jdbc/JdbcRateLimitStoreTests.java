package dev.ratelimit.core.jdbc;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import javax.sql.DataSource;

import dev.ratelimit.core.KeyedPolicy;
import dev.ratelimit.core.RateLimitPolicy;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * What the PostgreSQL store checks before it reaches a database: the table's name, the schema file, and where
 * the asynchronous calls wait for it.
 */
class JdbcRateLimitStoreTests {

	private static final DataSource NO_DATABASE = new org.postgresql.ds.PGSimpleDataSource() {

		@Override
		public java.sql.Connection getConnection() throws SQLException {
			throw new SQLException("no database in a unit test");
		}

	};

	@ParameterizedTest
	@ValueSource(strings = { "ratelimit_state", "RateLimits", "app.ratelimit_state", "_x1",
			"a23456789012345678901234567890123456789012345678901b" })
	void acceptsATableNameThatNeedsNoQuoting(String name) {
		assertThat(JdbcRateLimitStore.builder(NO_DATABASE).tableName(name)).isNotNull();
	}

	@ParameterizedTest
	@ValueSource(strings = { "", "1table", "rate-limits", "a.b.c", "state; DROP TABLE users", "\"quoted\"", "a.",
			"a23456789012345678901234567890123456789012345678901bc" })
	void rejectsATableNameThatIsNoPlainIdentifier(String name) {
		assertThatIllegalArgumentException().isThrownBy(() -> JdbcRateLimitStore.builder(NO_DATABASE).tableName(name))
			.withMessageContaining("The table name must be an SQL identifier")
			.withMessageContaining("'" + name + "'");
	}

	@Test
	void buildsWithoutTheDatabaseWhenToldNotToCreateTheSchema() {
		assertThat(JdbcRateLimitStore.builder(NO_DATABASE).createSchema(false).build().resetAll()).isPresent();
	}

	@Test
	void theSchemaFileHasTheTableNameAsItsOnlyPlaceholder() throws IOException {
		try (InputStream in = JdbcRateLimitStore.class.getResourceAsStream("/META-INF/ratelimit/sql/schema.sql")) {
			assertThat(in).as("the schema in the jar").isNotNull();
			String schema = new String(in.readAllBytes(), StandardCharsets.UTF_8);
			Matcher placeholders = Pattern.compile("\\$\\{[^}]*}").matcher(schema);
			while (placeholders.find()) {
				assertThat(placeholders.group()).isEqualTo("${table}");
			}
			assertThat(schema).contains("CREATE TABLE IF NOT EXISTS ${table} (");
		}
	}

	@Test
	void callsTheDatabaseOfAsynchronousCallsOnTheCallingThreadByDefault() {
		JdbcRateLimitStore store = JdbcRateLimitStore.builder(NO_DATABASE).createSchema(false).build();
		CompletionStage<?> decided = store.decideAllAsync(List.of(new KeyedPolicy("k", POLICY)));
		// done before it returns: the database refused on this thread
		assertThat(decided.toCompletableFuture()).isCompletedExceptionally();
	}

	@Test
	void callsTheDatabaseOfAsynchronousCallsOnTheExecutor() {
		List<Runnable> handedOver = new ArrayList<>();
		JdbcRateLimitStore store = JdbcRateLimitStore.builder(NO_DATABASE)
			.createSchema(false)
			.executor(handedOver::add)
			.build();
		List<CompletionStage<?>> stages = List.of(store.decideAllAsync(List.of(new KeyedPolicy("k", POLICY))),
				store.giveBackAsync(List.of(new KeyedPolicy("k", POLICY)),
						List.of(new dev.ratelimit.core.Decision(true, 5, 4, 0, 0, 0, 1))),
				store.inspectAsync("k", POLICY));
		assertThat(stages).allSatisfy((stage) -> assertThat(stage.toCompletableFuture()).isNotDone());
		assertThat(handedOver).hasSize(3);
		handedOver.forEach(Runnable::run);
		assertThat(stages).allSatisfy((stage) -> assertThatIllegalStateException()
			.isThrownBy(() -> unwrap(stage)));
	}

	@Test
	void failsTheStageOfACallTheExecutorRefuses() {
		Executor full = (call) -> {
			throw new RejectedExecutionException("full");
		};
		JdbcRateLimitStore store = JdbcRateLimitStore.builder(NO_DATABASE).createSchema(false).executor(full).build();
		assertThat(store.inspectAsync("k", POLICY).toCompletableFuture()).isCompletedExceptionally()
			.failsWithin(Duration.ZERO)
			.withThrowableOfType(java.util.concurrent.ExecutionException.class)
			.withCauseInstanceOf(RejectedExecutionException.class);
	}

	private static void unwrap(CompletionStage<?> stage) throws Throwable {
		try {
			stage.toCompletableFuture().join();
		}
		catch (java.util.concurrent.CompletionException ex) {
			throw ex.getCause();
		}
	}

	private static final RateLimitPolicy POLICY = RateLimitPolicy.of("p", dev.ratelimit.core.Algorithm.TOKEN_BUCKET, 5, Duration.ofMinutes(1));

}
