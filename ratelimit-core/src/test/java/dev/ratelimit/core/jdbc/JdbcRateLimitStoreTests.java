package dev.ratelimit.core.jdbc;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.sql.SQLException;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import javax.sql.DataSource;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import dev.ratelimit.core.FailurePolicy;
import dev.ratelimit.core.internal.FailureKind;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * What the PostgreSQL store checks before it reaches a database: the table's name, the timeout and the schema
 * file, and how it reads the database's failures.
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

}
