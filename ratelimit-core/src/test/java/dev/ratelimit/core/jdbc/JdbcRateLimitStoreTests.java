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

import dev.ratelimit.core.Decision;
import dev.ratelimit.core.KeyedPolicy;
import dev.ratelimit.core.RateLimitPolicy;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import dev.ratelimit.core.FailurePolicy;
import dev.ratelimit.core.internal.FailureKind;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * What the PostgreSQL store checks before it reaches a database: the table's name, the timeout and the schema
 * file, how it reads the database's failures, and where the asynchronous calls wait for it.
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
		try (JdbcRateLimitStore store = JdbcRateLimitStore.builder(NO_DATABASE).createSchema(false).build()) {
			assertThat(store.resetAll()).isPresent();
		}
	}

	@Test
	void reportsItsFailuresUnderLocalByDefaultAndCountsItselfAloneBeforeAnyHeartbeat() {
		try (JdbcRateLimitStore store = JdbcRateLimitStore.builder(NO_DATABASE).createSchema(false).build()) {
			assertThat(store.failures().orElseThrow().status().failurePolicy()).isEqualTo(FailurePolicy.LOCAL);
			assertThat(store.fleet().orElseThrow().size()).isEqualTo(1);
		}
	}

	@ParameterizedTest
	@ValueSource(strings = { "PT0S", "PT-0.1S" })
	void rejectsATimeoutThatIsNotPositive(String timeout) {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> JdbcRateLimitStore.builder(NO_DATABASE).timeout(Duration.parse(timeout)))
			.withMessageContaining("timeout must be positive");
	}

	@ParameterizedTest
	@CsvSource({ "08001, UNREACHABLE", "08006, UNREACHABLE", "57P01, UNREACHABLE", "57P03, UNREACHABLE",
			"57014, SLOW", "55P03, SLOW", "25006, ERROR", "40001, ERROR" })
	void tellsWhyTheDatabaseDidNotDecideByItsSqlState(String state, FailureKind kind) {
		SQLException failure = new SQLException("failed", state);
		assertThat(BoundedCalls.kind(new IllegalStateException(failure))).isEqualTo(kind);
		assertThat(BoundedCalls.misconfigured(failure)).isFalse();
	}

	@Test
	void leavesAMissingSchemaToTheApplicationRatherThanToTheFailurePolicy() {
		assertThat(BoundedCalls.misconfigured(new SQLException("function does not exist", "42883"))).isTrue();
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
		JdbcRateLimitStore store = JdbcRateLimitStore.builder(NO_DATABASE)
			.createSchema(false)
			.failurePolicy(FailurePolicy.DENY)
			.build();
		CompletionStage<List<Decision>> decided = store.decideAllAsync(List.of(new KeyedPolicy("k", POLICY)));
		// done before it returns: the database refused, and the failure policy decided, while this thread waited
		assertThat(decided.toCompletableFuture()).isCompleted();
		assertThat(decided.toCompletableFuture().join().get(0).allowed()).isFalse();
		store.close();
	}

	@Test
	void callsTheDatabaseOfAsynchronousCallsOnTheExecutor() {
		List<Runnable> handedOver = new ArrayList<>();
		JdbcRateLimitStore store = JdbcRateLimitStore.builder(NO_DATABASE)
			.createSchema(false)
			.failurePolicy(FailurePolicy.DENY)
			.executor(handedOver::add)
			.build();
		CompletionStage<List<Decision>> decided = store.decideAllAsync(List.of(new KeyedPolicy("k", POLICY)));
		List<CompletionStage<?>> stages = List.of(decided,
				store.giveBackAsync(List.of(new KeyedPolicy("k", POLICY)),
						List.of(new Decision(true, 5, 4, 0, 0, 0, 1))),
				store.inspectAsync("k", POLICY));
		assertThat(stages).allSatisfy((stage) -> assertThat(stage.toCompletableFuture()).isNotDone());
		assertThat(handedOver).hasSize(3);
		handedOver.forEach(Runnable::run);
		assertThat(stages).allSatisfy((stage) -> assertThat(stage.toCompletableFuture()).isDone());
		assertThat(decided.toCompletableFuture().join().get(0).allowed()).as("denied by the failure policy").isFalse();
		store.close();
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

	private static final RateLimitPolicy POLICY = RateLimitPolicy.of("p", dev.ratelimit.core.Algorithm.TOKEN_BUCKET, 5,
			Duration.ofMinutes(1));

}
