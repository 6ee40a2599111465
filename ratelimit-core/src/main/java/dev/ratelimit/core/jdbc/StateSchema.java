package dev.ratelimit.core.jdbc;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.regex.Pattern;

import javax.sql.DataSource;

/**
 * The table and functions of a store, from {@code META-INF/ratelimit/sql/schema.sql}, whose only placeholder is
 * the table's name.
 */
final class StateSchema {

	/** Where the build puts the schema, from {@code src/main/sql}. */
	static final String RESOURCE = "/META-INF/ratelimit/sql/schema.sql";

	/**
	 * A table name, optionally schema-qualified, that needs no quoting: short enough that every function named
	 * after it, the longest with eleven characters more, stays within PostgreSQL's 63.
	 */
	private static final Pattern TABLE_NAME = Pattern
		.compile("([a-z_][a-z0-9_]{0,62}\\.)?[a-z_][a-z0-9_]{0,51}", Pattern.CASE_INSENSITIVE);

	/** The key of the advisory lock that stores creating their schema at once take turns on. */
	private static final long LOCK = 0x7261_7465_6c69_6d69L;

	private StateSchema() {
	}

	/**
	 * Checks that {@code table} can name the table.
	 * @return the name
	 * @throws IllegalArgumentException if it cannot
	 */
	static String checkTableName(String table) {
		if (table == null || !TABLE_NAME.matcher(table).matches()) {
			throw new IllegalArgumentException("The table name must be an SQL identifier of letters, digits and "
					+ "underscores, at most 52 characters, optionally after a schema name and a dot, was '" + table
					+ "'");
		}
		return table;
	}

	/** The schema of the table named {@code table}. */
	static String sql(String table) {
		try (InputStream in = StateSchema.class.getResourceAsStream(RESOURCE)) {
			if (in == null) {
				throw new IllegalStateException(RESOURCE + " is missing from the class path");
			}
			return new String(in.readAllBytes(), StandardCharsets.UTF_8).replace("${table}", table);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	/**
	 * Creates the table, its index and the functions where missing, in one transaction, holding an advisory lock
	 * so that stores starting at once create them one after another.
	 */
	static void create(DataSource dataSource, String table) {
		String sql = sql(table);
		try (Connection connection = dataSource.getConnection()) {
			boolean autoCommit = connection.getAutoCommit();
			connection.setAutoCommit(false);
			try (Statement statement = connection.createStatement()) {
				statement.execute("SELECT pg_advisory_xact_lock(" + LOCK + ")");
				statement.execute(sql);
				connection.commit();
			}
			catch (SQLException | RuntimeException ex) {
				connection.rollback();
				throw ex;
			}
			finally {
				connection.setAutoCommit(autoCommit);
			}
		}
		catch (SQLException ex) {
			throw new IllegalStateException("The table " + table + " and its functions could not be created: "
					+ ex.getMessage(), ex);
		}
	}

}
