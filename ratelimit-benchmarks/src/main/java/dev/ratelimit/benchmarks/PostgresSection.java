package dev.ratelimit.benchmarks;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.results.format.ResultFormatType;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;
import org.openjdk.jmh.util.Statistics;

/**
 * The PostgreSQL benchmarks against a cluster started on a free loopback port, or the database at
 * {@code POSTGRES_URL}: decisions per second and the median and 99th percentile time of a decision through our
 * store and through Bucket4j's PostgreSQL backend, from 1, 16 and 64 callers, on one key and over 10k keys.
 */
final class PostgresSection {

	private static final String[] QUICK = { "GCRA", PostgresContender.BUCKET4J };

	private static final String[] PEERS = { PostgresContender.BUCKET4J, PostgresContender.BUCKET4J_FOR_UPDATE };

	private static final String P50 = ", p50";

	private static final String P99 = ", p99";

	private final Suite.Mode mode;

	private final Path out;

	PostgresSection(Suite.Mode mode, Path out) {
		this.mode = mode;
		this.out = out;
	}

	void run(Suite.Report report) throws Exception {
		try (PostgresServer postgres = PostgresServer.start()) {
			String version = version(postgres.url());
			List<List<InMemorySection.Row>> rounds = new ArrayList<>();
			for (int round = 1; round <= this.mode.rounds; round++) {
				rounds.add(jmh(postgres, round));
			}
			report.section(render(new InMemorySection.Results(rounds), version));
		}
	}

	private static String version(String url) throws SQLException {
		try (var pool = PostgresContender.pool(url, 1); Connection connection = pool.getConnection();
				Statement statement = connection.createStatement();
				ResultSet result = statement.executeQuery("SHOW server_version")) {
			result.next();
			return result.getString(1);
		}
	}

	private String[] contenders() throws NoSuchFieldException {
		return (this.mode == Suite.Mode.QUICK) ? QUICK
				: PostgresBenchmark.class.getField("contender").getAnnotation(Param.class).value();
	}

	/** Every contender in every scenario once, each in a JVM of its own; three rows per result. */
	private List<InMemorySection.Row> jmh(PostgresServer postgres, int round) throws RunnerException, NoSuchFieldException {
		var options = new OptionsBuilder().include(PostgresBenchmark.class.getName() + "\\.")
			.param("contender", contenders())
			.forks(1)
			.warmupIterations(this.mode.warmups)
			.warmupTime(TimeValue.seconds(1))
			.measurementIterations(this.mode.iterations)
			.measurementTime(TimeValue.seconds(1))
			.jvmArgsAppend("-Xmx1g", "-Dbench.postgres.url=" + postgres.url())
			.resultFormat(ResultFormatType.JSON)
			.result(this.out.resolve("jmh-postgres-" + round + ".json").toString())
			.build();
		List<InMemorySection.Row> rows = new ArrayList<>();
		for (RunResult result : new Runner(options).run()) {
			rows.addAll(rows(result));
		}
		return rows;
	}

	/**
	 * The decisions per second of a throughput run, or the median and 99th percentile in µs of a run that timed
	 * the calls, each as a row of its own so that medians over rounds and in-round ratios treat them alike.
	 */
	static List<InMemorySection.Row> rows(RunResult result) {
		var params = result.getParams();
		String benchmark = params.getBenchmark();
		String scenario = scenario(benchmark.substring(benchmark.lastIndexOf('.') + 1), params.getParam("keys"));
		String contender = params.getParam("contender");
		Result<?> primary = result.getPrimaryResult();
		if (params.getMode() == Mode.SampleTime) {
			Statistics times = primary.getStatistics();
			return List.of(
					new InMemorySection.Row(scenario + P50, Load.ALLOWED, contender, times.getPercentile(50), Double.NaN,
							Double.NaN, Double.NaN),
					new InMemorySection.Row(scenario + P99, Load.ALLOWED, contender, times.getPercentile(99), Double.NaN,
							Double.NaN, Double.NaN));
		}
		Result<?> denied = result.getSecondaryResults().get("denied");
		// rates in the benchmark's unit, per µs
		return List.of(new InMemorySection.Row(scenario, Load.ALLOWED, contender, primary.getScore() * 1e6,
				primary.getScoreError() * 1e6, (denied != null) ? denied.getScore() / primary.getScore() : 0,
				Double.NaN));
	}

	static String scenario(String method, String keys) {
		String callers = switch (method) {
			case "oneThread" -> "1 caller";
			case "sixteenThreads" -> "16 callers";
			case "sixtyFourThreads" -> "64 callers";
			default -> method;
		};
		return ("1".equals(keys) ? "one key, " : "10k Zipf keys, ") + callers;
	}

	private String render(InMemorySection.Results results, String version) {
		StringBuilder md = new StringBuilder("## PostgreSQL\n\n");
		md.append("PostgreSQL ").append(version).append(" on 127.0.0.1, durability off (`fsync`, `synchronous_commit`, ")
			.append("`full_page_writes`), started by the suite unless `POSTGRES_URL` names one. Each contender has a ")
			.append("table of its own, emptied before each run, and a HikariCP pool of ").append(PostgresContender.POOL_SIZE)
			.append(" connections, Spring Boot's default, which its callers share; each caller waits for its answer. ")
			.append("Ours: one call of the table's `_decide` function per decision, in autocommit. `bucket4j`: ")
			.append("Bucket4j's `PostgreSQLadvisoryLockBasedProxyManager` (`pg_advisory_xact_lock`, then `SELECT`, ")
			.append("`UPDATE`, `COMMIT`), `bucket4j-for-update` its `PostgreSQLSelectForUpdateBasedProxyManager` ")
			.append("(`SELECT ... FOR UPDATE`, `UPDATE`, `COMMIT`), both a token bucket of the same limit and burst ")
			.append("(the ALLOWED load, every call allowed), keys as text, with the expiry columns of their ")
			.append("documentation and the same index on `expires_at` as ours. Over 10k keys the callers walk a ")
			.append("Zipf stream, every key created before measurement. Every benchmark runs twice, each in a JVM of ")
			.append("its own: for the decisions per second (`Mode.Throughput`), and for p50 and p99, percentiles in µs ")
			.append("of the calls' times (`Mode.SampleTime`). Figures are medians ")
			.append("over rounds, ± half their spread (JMH's error for a single round), and a ratio is the median of ")
			.append("in-round ratios of decisions per second (above 1: ours decides more).\n\n");
		List<String> scenarios = results.medians().stream().map(InMemorySection.Row::scenario)
			.filter((scenario) -> !scenario.endsWith(P50) && !scenario.endsWith(P99))
			.distinct()
			.toList();
		for (String scenario : scenarios) {
			md.append("### ").append(scenario).append("\n\n");
			md.append("| contender | decisions/s | ± | p50 µs | p99 µs | denied |");
			for (String peer : PEERS) {
				md.append(" × ").append(peer).append(" |");
			}
			md.append("\n|---|--:|--:|--:|--:|--:|").append("--:|".repeat(PEERS.length)).append('\n');
			for (InMemorySection.Row row : results.medians()) {
				if (!row.scenario().equals(scenario)) {
					continue;
				}
				md.append(String.format(Locale.ROOT, "| %s | %,.0f | %s | %s | %s | %.1f%% |", row.contender(),
						row.score(), number(row.error()), number(percentile(results, scenario + P50, row.contender())),
						number(percentile(results, scenario + P99, row.contender())),
						100 * Math.min(1, row.deniedShare())));
				for (String peer : PEERS) {
					double ratio = row.isOurs() ? results.ratio(scenario, Load.ALLOWED, row.contender(), peer)
							: Double.NaN;
					md.append(' ').append(Double.isNaN(ratio) ? "" : String.format(Locale.ROOT, "%.2f", ratio))
						.append(" |");
				}
				md.append('\n');
			}
			md.append('\n');
		}
		return md.toString();
	}

	private static double percentile(InMemorySection.Results results, String scenario, String contender) {
		InMemorySection.Row row = InMemorySection.find(results.medians(), scenario, Load.ALLOWED, contender);
		return (row != null) ? row.score() : Double.NaN;
	}

	private static String number(double value) {
		return Double.isNaN(value) ? "" : String.format(Locale.ROOT, "%,.0f", value);
	}

}
