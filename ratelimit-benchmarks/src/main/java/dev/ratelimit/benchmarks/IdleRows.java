package dev.ratelimit.benchmarks;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import com.zaxxer.hikari.HikariDataSource;
import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.FailurePolicy;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.RateLimiter;
import dev.ratelimit.core.jdbc.JdbcRateLimitStore;

/**
 * What idle rows cost the PostgreSQL store under hostile keys, and how two ways of removing them keep up: 200,000
 * requests as fast as {@value #SENDERS} callers can send them, each with a key never seen before, against 10 per
 * minute (GCRA and fixed window), while the rows are removed
 * <ul>
 * <li>{@code starter}: by the store's {@code deleteExpired}, called as the starter calls it by default: every
 * minute ({@code ratelimit.jdbc.cleanup-interval}), at most {@value #CALLS_PER_ROUND} calls of
 * {@value #BATCH} rows a round;</li>
 * <li>{@code drain}: by the same calls every minute, repeated until one deletes fewer than {@value #BATCH};</li>
 * <li>{@code partitioned}: from an experimental variant of the table, range-partitioned by {@code expires_at} in
 * partitions of {@value #PARTITION_SECONDS} s, by detaching ({@code CONCURRENTLY}, which waits for every
 * transaction that uses it) and dropping each partition whose range has passed, every {@value #MAINTENANCE_SECONDS}
 * s (see {@code sql/partitioned-table.sql}).</li>
 * </ul>
 * Every {@value #SAMPLE_SECONDS} s it reads the rows, the size of the table and its indexes
 * ({@code pg_total_relation_size}, summed over the partitions), the dead tuples and autovacuum runs
 * ({@code pg_stat_user_tables}), the time spent removing rows so far and the decisions per second since the last
 * reading. After the requests it waits a window, so that every row is idle, runs one more round of removal, reads
 * again, runs {@code VACUUM} and reads again.
 * <p>
 * Usage: {@code java -cp ratelimit-benchmarks/target/benchmarks.jar dev.ratelimit.benchmarks.IdleRows
 * [--requests N] [--runs GCRA:starter,...] [--out FILE]}.
 */
public final class IdleRows {

	static final String USAGE = """
			usage: java -cp ratelimit-benchmarks/target/benchmarks.jar dev.ratelimit.benchmarks.IdleRows [options]
			  --requests N     requests per run, each with a new key (200000)
			  --runs LIST      algorithm:way pairs, ways starter, drain, partitioned
			                   (GCRA:starter,GCRA:drain,GCRA:partitioned,FIXED_WINDOW:starter,FIXED_WINDOW:partitioned)
			  --out FILE       the markdown report (ratelimit-benchmarks/target/results/idle-rows.md)
			  --help, -h       this text
			Starts a PostgreSQL cluster (initdb and pg_ctl from the PATH or /usr/lib/postgresql) unless POSTGRES_URL
			names a database on this machine.""";

	/** Rows deleted by one call, as the starter's cleanup deletes them. */
	static final int BATCH = 1000;

	/** Calls in one round of the starter's cleanup. */
	static final int CALLS_PER_ROUND = 10;

	/** The starter's default {@code ratelimit.jdbc.cleanup-interval}, in seconds. */
	static final int CLEANUP_SECONDS = 60;

	static final int PARTITION_SECONDS = 10;

	static final int MAINTENANCE_SECONDS = 5;

	/** How far ahead partitions exist: beyond the longest a row of a 1-minute window can be ahead of now. */
	private static final int PARTITIONS_AHEAD_SECONDS = 180;

	static final int SAMPLE_SECONDS = 5;

	static final int SENDERS = 16;

	private static final Duration WINDOW = Duration.ofMinutes(1);

	private final String url;

	private final HikariDataSource pool;

	private IdleRows(String url, HikariDataSource pool) {
		this.url = url;
		this.pool = pool;
	}

	public static void main(String[] args) throws Exception {
		CommandLine.helpIfAsked(args, USAGE);
		int requests = 200_000;
		List<String> runs = List.of("GCRA:starter", "GCRA:drain", "GCRA:partitioned", "FIXED_WINDOW:starter",
				"FIXED_WINDOW:partitioned");
		Path out = Path.of("ratelimit-benchmarks", "target", "results", "idle-rows.md");
		try {
			for (int i = 0; i < args.length; i++) {
				switch (args[i]) {
					case "--requests" -> requests = Integer.parseInt(value(args, ++i));
					case "--runs" -> runs = Arrays.asList(value(args, ++i).split(","));
					case "--out" -> out = Path.of(value(args, ++i));
					default -> throw new IllegalArgumentException("unknown argument '" + args[i] + "'");
				}
			}
			for (String run : runs) {
				String[] parts = run.split(":");
				if (parts.length != 2 || !List.of("starter", "drain", "partitioned").contains(parts[1])) {
					throw new IllegalArgumentException("a run is algorithm:starter|drain|partitioned, not '" + run + "'");
				}
				Algorithm.valueOf(parts[0]);
			}
		}
		catch (IllegalArgumentException ex) {
			CommandLine.fail(ex, USAGE);
		}
		StringBuilder md = new StringBuilder("# Idle rows under hostile keys\n\n");
		md.append("- date: ").append(LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm")))
			.append("\n- machine: ").append(Machine.describe())
			.append("\n- load average before: ").append(Machine.loadAverage())
			.append("\n- requests per run: ").append(requests).append(", each with a new key, ").append(SENDERS)
			.append(" callers, 10 per minute\n\n");
		List<Outcome> outcomes = new ArrayList<>();
		try (PostgresServer postgres = PostgresServer.start();
				HikariDataSource pool = PostgresContender.pool(postgres.url(), SENDERS)) {
			IdleRows experiment = new IdleRows(postgres.url(), pool);
			for (String run : runs) {
				String[] parts = run.split(":");
				Outcome outcome = experiment.run(Algorithm.valueOf(parts[0]), parts[1], requests);
				outcomes.add(outcome);
				System.out.println(outcome.summaryRow());
			}
		}
		md.append("| algorithm | way | decisions/s | most rows | rows, end of requests | MB, end of requests | dead, end of requests | rows, idle | MB, idle | dead, idle | MB after VACUUM | removing (s) | longest round (ms) | autovacuums |\n");
		md.append("|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n");
		outcomes.forEach((outcome) -> md.append(outcome.summaryRow()).append('\n'));
		md.append("\nLoad average after: ").append(Machine.loadAverage()).append("\n\n");
		for (Outcome outcome : outcomes) {
			md.append(outcome.timeline());
		}
		Files.createDirectories(out.toAbsolutePath().getParent());
		Files.writeString(out, md);
		System.out.println(md);
		System.out.println("Written to " + out.toAbsolutePath());
	}

	private static String value(String[] args, int index) {
		if (index >= args.length) {
			throw new IllegalArgumentException(args[index - 1] + " needs a value");
		}
		return args[index];
	}

	private Outcome run(Algorithm algorithm, String way, int requests) throws Exception {
		String table = ("idle_" + way + "_" + algorithm).toLowerCase(Locale.ROOT);
		boolean partitioned = way.equals("partitioned");
		if (partitioned) {
			execute(RedisSection.resource("sql/partitioned-table.sql").replace("${table}", table));
			maintainPartitions(table);
		}
		AtomicLong fallbacks = new AtomicLong();
		Outcome outcome = new Outcome(algorithm, way);
		try (HikariDataSource connections = PostgresContender.pool(this.url, PostgresContender.POOL_SIZE);
				JdbcRateLimitStore store = JdbcRateLimitStore.builder(connections)
					.tableName(table)
					.timeout(Duration.ofSeconds(10))
					.failurePolicy(FailurePolicy.DENY)
					.onFailure((policies, cause) -> fallbacks.incrementAndGet())
					.build()) {
			if (partitioned) {
				execute(RedisSection.resource("sql/partitioned-lock.sql").replace("${table}", table));
			}
			RateLimiter limiter = store.limiter(RateLimitPolicy.of("hostile", algorithm, 10, WINDOW));
			Runnable removal = partitioned ? () -> maintainPartitions(table)
					: () -> deleteExpired(store, way.equals("drain") ? Integer.MAX_VALUE : CALLS_PER_ROUND);
			ScheduledExecutorService background = Executors.newScheduledThreadPool(2);
			AtomicLong sent = new AtomicLong();
			AtomicLong removing = new AtomicLong();
			AtomicLong longest = new AtomicLong();
			Runnable timedRemoval = () -> {
				long start = System.nanoTime();
				removal.run();
				long took = System.nanoTime() - start;
				removing.addAndGet(took);
				longest.accumulateAndGet(took, Math::max);
			};
			long started = System.nanoTime();
			try {
				int period = partitioned ? MAINTENANCE_SECONDS : CLEANUP_SECONDS;
				background.scheduleWithFixedDelay(timedRemoval, period, period, TimeUnit.SECONDS);
				background.scheduleAtFixedRate(() -> outcome.add(sample(table, started, sent.get(), removing.get())),
						0, SAMPLE_SECONDS, TimeUnit.SECONDS);
				send(limiter, requests, sent);
				outcome.endOfRequests(sample(table, started, sent.get(), removing.get()));
				// every row idle, whatever its algorithm, then the next round of removal as it would come
				Thread.sleep(WINDOW.toMillis() + 1000);
			}
			finally {
				background.shutdown();
				background.awaitTermination(5, TimeUnit.MINUTES);
			}
			timedRemoval.run();
			outcome.idle(sample(table, started, sent.get(), removing.get()));
			execute("VACUUM " + table);
			outcome.vacuumed(sample(table, started, sent.get(), removing.get()), longest.get());
			if (fallbacks.get() > 0) {
				throw new IllegalStateException(fallbacks.get() + " decisions were made without PostgreSQL");
			}
		}
		execute("DROP TABLE " + table + " CASCADE");
		return outcome;
	}

	private static void send(RateLimiter limiter, int requests, AtomicLong sent) throws Exception {
		ExecutorService senders = Executors.newFixedThreadPool(SENDERS);
		try {
			List<Future<?>> done = new ArrayList<>();
			for (int t = 0; t < SENDERS; t++) {
				done.add(senders.submit(() -> {
					for (long i = sent.getAndIncrement(); i < requests; i = sent.getAndIncrement()) {
						limiter.tryAcquire("attacker:" + i);
					}
					return null;
				}));
			}
			for (Future<?> future : done) {
				future.get();
			}
			sent.set(requests);
		}
		finally {
			senders.shutdown();
		}
	}

	/** One round of the store's cleanup: calls of {@value #BATCH} rows until one deletes fewer, at most {@code calls}. */
	private static void deleteExpired(JdbcRateLimitStore store, int calls) {
		for (int call = 0; call < calls; call++) {
			if (store.deleteExpired(BATCH) < BATCH) {
				return;
			}
		}
	}

	/**
	 * Creates the partitions of the next {@value #PARTITIONS_AHEAD_SECONDS} s that are missing, then detaches and
	 * drops every partition whose range ended before now: its rows are all back to their full quota.
	 */
	private void maintainPartitions(String table) {
		try (Connection connection = this.pool.getConnection(); Statement statement = connection.createStatement()) {
			long span = PARTITION_SECONDS * 1_000_000L;
			long now = single(statement, "SELECT (extract(epoch FROM clock_timestamp()) * 1000000)::bigint");
			for (long from = Math.floorDiv(now, span) * span; from < now + PARTITIONS_AHEAD_SECONDS * 1_000_000L;
					from += span) {
				statement.execute(String.format(Locale.ROOT,
						"CREATE TABLE IF NOT EXISTS %s_p%d PARTITION OF %s FOR VALUES FROM (%d) TO (%d)", table,
						from / span, table, from, from + span));
			}
			List<String> passed = new ArrayList<>();
			try (ResultSet partitions = statement.executeQuery("SELECT c.relname FROM pg_inherits i JOIN pg_class c "
					+ "ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent WHERE p.relname = '" + table + "'")) {
				while (partitions.next()) {
					String name = partitions.getString(1);
					long from = Long.parseLong(name.substring(name.lastIndexOf("_p") + 2)) * span;
					if (from + span <= now) {
						passed.add(name);
					}
				}
			}
			for (String name : passed) {
				statement.execute("ALTER TABLE " + table + " DETACH PARTITION " + name + " CONCURRENTLY");
				statement.execute("DROP TABLE " + name);
			}
		}
		catch (SQLException ex) {
			throw new IllegalStateException("Could not maintain the partitions of " + table + ": " + ex.getMessage(), ex);
		}
	}

	private Sample sample(String table, long started, long sent, long removingNanos) {
		String relations = "SELECT '" + table + "'::regclass AS relid UNION SELECT relid FROM pg_partition_tree('"
				+ table + "') WHERE isleaf";
		try (Connection connection = this.pool.getConnection(); Statement statement = connection.createStatement()) {
			long rows = single(statement, "SELECT count(*) FROM " + table);
			long bytes = single(statement, "SELECT coalesce(sum(pg_total_relation_size(relid)), 0) FROM (" + relations + ") r");
			long indexes = single(statement, "SELECT coalesce(sum(pg_indexes_size(relid)), 0) FROM (" + relations + ") r");
			long dead = single(statement, "SELECT coalesce(sum(n_dead_tup), 0) FROM pg_stat_user_tables WHERE relid IN ("
					+ relations + ")");
			long autovacuums = single(statement, "SELECT coalesce(sum(autovacuum_count), 0) FROM pg_stat_user_tables "
					+ "WHERE relid IN (" + relations + ")");
			return new Sample((System.nanoTime() - started) / 1e9, sent, rows, bytes, indexes, dead, autovacuums,
					removingNanos / 1e9);
		}
		catch (SQLException ex) {
			throw new IllegalStateException("Could not read the size of " + table + ": " + ex.getMessage(), ex);
		}
	}

	private static long single(Statement statement, String sql) throws SQLException {
		try (ResultSet result = statement.executeQuery(sql)) {
			result.next();
			return result.getLong(1);
		}
	}

	private void execute(String sql) {
		PostgresContender.execute(this.pool, sql);
	}

	/**
	 * One reading.
	 * @param seconds since the requests began
	 * @param sent requests sent so far
	 * @param rows rows in the table
	 * @param bytes the table, its indexes and TOAST, summed over the partitions
	 * @param indexes the indexes alone
	 * @param dead dead tuples, as the statistics last counted them
	 * @param autovacuums autovacuum runs on the table so far
	 * @param removing seconds spent removing rows so far
	 */
	record Sample(double seconds, long sent, long rows, long bytes, long indexes, long dead, long autovacuums,
			double removing) {

		String mb(long value) {
			return String.format(Locale.ROOT, "%.1f", value / 1048576.0);
		}

	}

	/** The readings of one run and its figures at the end of the requests, once idle and after {@code VACUUM}. */
	static final class Outcome {

		private final Algorithm algorithm;

		private final String way;

		private final List<Sample> samples = new ArrayList<>();

		private Sample endOfRequests;

		private Sample idle;

		private Sample vacuumed;

		private long longestNanos;

		Outcome(Algorithm algorithm, String way) {
			this.algorithm = algorithm;
			this.way = way;
		}

		synchronized void add(Sample sample) {
			this.samples.add(sample);
		}

		void endOfRequests(Sample sample) {
			this.endOfRequests = sample;
		}

		void idle(Sample sample) {
			this.idle = sample;
		}

		void vacuumed(Sample sample, long longestNanos) {
			this.vacuumed = sample;
			this.longestNanos = longestNanos;
		}

		synchronized String summaryRow() {
			long most = this.samples.stream().mapToLong(Sample::rows).max().orElse(0);
			return String.format(Locale.ROOT, "| %s | %s | %,.0f | %,d | %,d | %s | %,d | %,d | %s | %,d | %s | %.1f | %,.0f | %d |",
					this.algorithm, this.way, this.endOfRequests.sent() / this.endOfRequests.seconds(), most,
					this.endOfRequests.rows(), this.endOfRequests.mb(this.endOfRequests.bytes()),
					this.endOfRequests.dead(), this.idle.rows(), this.idle.mb(this.idle.bytes()), this.idle.dead(),
					this.vacuumed.mb(this.vacuumed.bytes()), this.vacuumed.removing(), this.longestNanos / 1e6,
					this.vacuumed.autovacuums());
		}

		synchronized String timeline() {
			StringBuilder md = new StringBuilder("### ").append(this.algorithm).append(", ").append(this.way)
				.append("\n\n| s | requests | decisions/s | rows | MB | of which indexes | dead | autovacuums | removing (s) |\n")
				.append("|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n");
			Sample previous = null;
			for (Sample sample : this.samples) {
				double rate = (previous == null) ? 0
						: (sample.sent() - previous.sent()) / (sample.seconds() - previous.seconds());
				md.append(String.format(Locale.ROOT, "| %.0f | %,d | %,.0f | %,d | %s | %s | %,d | %d | %.2f |\n",
						sample.seconds(), sample.sent(), rate, sample.rows(), sample.mb(sample.bytes()),
						sample.mb(sample.indexes()), sample.dead(), sample.autovacuums(), sample.removing()));
				previous = sample;
			}
			return md.append('\n').toString();
		}

	}

}
