package dev.ratelimit.benchmarks;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.Objects;

import org.openjdk.jmh.profile.GCProfiler;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.results.format.ResultFormatType;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.ChainedOptionsBuilder;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;

/**
 * The in-memory benchmarks: every algorithm of ours and every peer, on one key from one and two threads and over
 * many Zipf-distributed keys from two threads, under a load that allows every call and one that denies most,
 * with the allocation per call from JMH's GC profiler.
 */
final class InMemorySection {

	private static final String[] QUICK_OURS = { "GCRA", "TOKEN_BUCKET", "FIXED_WINDOW" };

	private static final String[] RATIO_PEERS = { "bucket4j", "resilience4j", "guava", "bucket4j-bare", "guava-bare",
			Contender.MAP_FLOOR };

	private final Suite.Mode mode;

	private final Path out;

	InMemorySection(Suite.Mode mode, Path out) {
		this.mode = mode;
		this.out = out;
	}

	void run(Suite.Report report) throws RunnerException {
		List<List<Row>> rounds = new ArrayList<>();
		for (int round = 1; round <= this.mode.rounds; round++) {
			List<Row> rows = new ArrayList<>();
			if (this.mode == Suite.Mode.QUICK) {
				rows.addAll(run("oneKey-" + round, options(OneKeyBenchmark.class).param("load", "ALLOWED")
					.param("contender", concat(QUICK_OURS, Contender.PEERS, new String[] { "bucket4j-bare", "guava-bare" }))));
				rows.addAll(run("manyKeys-" + round, options(ManyKeysBenchmark.class).param("load", "ALLOWED")
					.param("keys", "10000")
					.param("contender", concat(QUICK_OURS, Contender.PEERS, new String[] { Contender.MAP_FLOOR }))));
			}
			else {
				rows.addAll(run("oneKey-" + round, options(OneKeyBenchmark.class)));
				rows.addAll(run("manyKeys-" + round, options(ManyKeysBenchmark.class)));
			}
			rounds.add(rows);
		}
		Results results = new Results(rounds);
		report.section(render(results));
		checkTargets(results, report);
	}

	private ChainedOptionsBuilder options(Class<?> benchmark) {
		return new OptionsBuilder().include(benchmark.getName() + "\\.")
			.forks(1)
			.warmupIterations(this.mode.warmups)
			.warmupTime(TimeValue.seconds(1))
			.measurementIterations(this.mode.iterations)
			.measurementTime(TimeValue.seconds(1))
			.addProfiler(GCProfiler.class)
			.jvmArgsAppend("-Xms3g", "-Xmx3g");
	}

	private List<Row> run(String name, ChainedOptionsBuilder options) throws RunnerException {
		Collection<RunResult> results = new Runner(options.resultFormat(ResultFormatType.JSON)
			.result(this.out.resolve("jmh-" + name + ".json").toString())
			.build()).run();
		List<Row> rows = new ArrayList<>();
		for (RunResult result : results) {
			rows.add(Row.of(result));
		}
		return rows;
	}

	private static String render(Results results) {
		List<Row> rows = results.medians();
		StringBuilder md = new StringBuilder("## In memory\n\n");
		md.append("Decisions per microsecond through `tryAcquire(key)` (higher is better), the share of calls denied, ")
			.append("bytes allocated per call (JMH `-prof gc`), and for our algorithms the ratio of our throughput to ")
			.append("each peer's in the same run (above 1: we are faster). Keyed peers hold one limiter per key in a ")
			.append("`ConcurrentHashMap`; `bucket4j-bare` is a single bucket that ignores the key. `map-floor` is no ")
			.append("limiter but the least work an exact keyed one does: a lookup in a `ConcurrentHashMap`, one read ")
			.append("of `System.nanoTime()` and one atomic write of the key's word. Figures are ")
			.append("medians over the rounds, ± is half the spread of the rounds (JMH's own error for a single ")
			.append("round), and a ratio is the median of the ratios measured within each round. The denied share ")
			.append("comes from a counter each thread keeps over its whole iteration, JMH's synchronization ")
			.append("included, so it is shown capped at 100%.\n\n");
		for (Load load : Load.values()) {
			for (String scenario : Row.SCENARIOS) {
				List<Row> selected = rows.stream()
					.filter((row) -> row.load == load && row.scenario.equals(scenario))
					.toList();
				if (selected.isEmpty()) {
					continue;
				}
				md.append("### ").append(scenario).append(", load ").append(load).append("\n\n");
				md.append("| contender | decisions/µs | ± | denied | B/call |");
				for (String peer : RATIO_PEERS) {
					md.append(" × ").append(peer).append(" |");
				}
				md.append("\n|---|--:|--:|--:|--:|").append("--:|".repeat(RATIO_PEERS.length)).append('\n');
				for (Row row : selected) {
					md.append(String.format(Locale.ROOT, "| %s | %.2f | %.2f | %.1f%% | %s |", row.contender,
							row.score, row.error, 100 * Math.min(1, row.deniedShare), Row.bytes(row.alloc)));
					for (String peer : RATIO_PEERS) {
						double ratio = row.isOurs() ? results.ratio(scenario, load, row.contender, peer) : Double.NaN;
						md.append(' ')
							.append(Double.isNaN(ratio) ? "" : String.format(Locale.ROOT, "%.2f", ratio))
							.append(" |");
					}
					md.append('\n');
				}
				md.append('\n');
			}
		}
		return md.toString();
	}

	private static void checkTargets(Results results, Suite.Report report) {
		String oneThread = Row.SCENARIOS.get(0);
		String hotKey = Row.SCENARIOS.get(1);
		for (String algorithm : new String[] { "GCRA", "TOKEN_BUCKET" }) {
			ratioTarget(report, results, oneThread, algorithm, "bucket4j", 1.5);
			ratioTarget(report, results, oneThread, algorithm, "guava-bare", 1.1);
		}
		for (String algorithm : QUICK_OURS) {
			ratioTarget(report, results, hotKey, algorithm, "resilience4j", 1.0);
			ratioTarget(report, results, hotKey, algorithm, "bucket4j", 2.0);
			spreadTarget(report, results, hotKey, algorithm, 0.2);
		}
		for (String algorithm : Contender.OURS) {
			scalingTarget(report, results, algorithm, 0.6);
		}
		for (String scenario : List.of(Row.SCENARIOS.get(2), Row.SCENARIOS.get(3))) {
			for (String algorithm : new String[] { "GCRA", "TOKEN_BUCKET" }) {
				ratioTarget(report, results, scenario, algorithm, "bucket4j", 2.0);
				ratioTarget(report, results, scenario, algorithm, "guava", 2.0);
			}
			// whether any limiter that looks its key up, reads the clock and writes the key's word could meet it
			ratioTarget(report, results, scenario, Contender.MAP_FLOOR, "guava", 2.0);
		}
		List<Row> rows = results.medians();
		for (String algorithm : QUICK_OURS) {
			List<Row> existingKey = rows.stream()
				.filter((row) -> row.contender.equals(algorithm) && row.scenario.startsWith("one key"))
				.toList();
			if (existingKey.isEmpty()) {
				continue;
			}
			double worst = existingKey.stream().mapToDouble((row) -> row.alloc).max().orElse(Double.NaN);
			report.target(algorithm + ": no allocation per `tryAcquire` on an existing key",
					"at most " + Row.bytes(worst) + " B/call over " + existingKey.size() + " runs", worst < 1);
		}
	}

	private static void ratioTarget(Suite.Report report, Results results, String scenario, String algorithm,
			String peer, double wanted) {
		double ratio = results.ratio(scenario, Load.ALLOWED, algorithm, peer);
		String what = String.format(Locale.ROOT, "%s, %s: ≥ %.1f× %s", algorithm, scenario, wanted, peer);
		if (Double.isNaN(ratio)) {
			report.target(what, "", null);
			return;
		}
		report.target(what, String.format(Locale.ROOT, "%.2f×", ratio), ratio >= wanted);
	}

	/** Two threads on one key against one thread, in the same round. */
	private static void scalingTarget(Suite.Report report, Results results, String algorithm, double wanted) {
		List<Double> ratios = new ArrayList<>();
		for (int round = 0; round < results.rounds(); round++) {
			Row one = find(results.roundRows(round), Row.SCENARIOS.get(0), Load.ALLOWED, algorithm);
			Row two = find(results.roundRows(round), Row.SCENARIOS.get(1), Load.ALLOWED, algorithm);
			if (one != null && two != null) {
				ratios.add(two.score / one.score);
			}
		}
		String what = String.format(Locale.ROOT, "%s, one key: two threads ≥ %.1f× one thread", algorithm, wanted);
		if (ratios.isEmpty()) {
			report.target(what, "", null);
			return;
		}
		double ratio = Results.median(ratios.stream().mapToDouble(Double::doubleValue).toArray());
		report.target(what, String.format(Locale.ROOT, "%.2f×", ratio), ratio >= wanted);
	}

	/** The spread of a score between rounds, each a fork of its own, against its median. */
	private static void spreadTarget(Suite.Report report, Results results, String scenario, String algorithm,
			double wanted) {
		String what = String.format(Locale.ROOT, "%s, %s: spread between forks < %.0f%%", algorithm, scenario,
				100 * wanted);
		Row median = find(results.medians(), scenario, Load.ALLOWED, algorithm);
		if (median == null || results.rounds() < 2) {
			report.target(what, (median == null) ? "" : "one fork only", null);
			return;
		}
		double spread = 2 * median.error / median.score;
		report.target(what, String.format(Locale.ROOT, "%.0f%% over %d forks", 100 * spread, results.rounds()),
				spread < wanted);
	}

	static Row find(List<Row> rows, String scenario, Load load, String contender) {
		return rows.stream()
			.filter((row) -> row.load == load && row.scenario.equals(scenario) && row.contender.equals(contender))
			.findFirst()
			.orElse(null);
	}

	private static String[] concat(String[]... arrays) {
		return java.util.Arrays.stream(arrays).flatMap(java.util.Arrays::stream).toArray(String[]::new);
	}

	/** The rows of every round, and their medians. */
	static final class Results {

		private final List<List<Row>> rounds;

		private final List<Row> medians = new ArrayList<>();

		Results(List<List<Row>> rounds) {
			this.rounds = rounds;
			for (Row first : rounds.get(0)) {
				List<Row> same = new ArrayList<>();
				for (List<Row> round : rounds) {
					Row row = find(round, first.scenario, first.load, first.contender);
					if (row != null) {
						same.add(row);
					}
				}
				double error = (same.size() == 1) ? first.error
						: (same.stream().mapToDouble(Row::score).max().getAsDouble()
								- same.stream().mapToDouble(Row::score).min().getAsDouble()) / 2;
				this.medians.add(new Row(first.scenario, first.load, first.contender,
						median(same.stream().mapToDouble(Row::score).toArray()), error,
						median(same.stream().mapToDouble(Row::deniedShare).toArray()),
						median(same.stream().mapToDouble(Row::alloc).toArray())));
			}
		}

		List<Row> medians() {
			return this.medians;
		}

		int rounds() {
			return this.rounds.size();
		}

		List<Row> roundRows(int round) {
			return this.rounds.get(round);
		}

		/** The median over the rounds of ours / peer within each round; NaN if never measured together. */
		double ratio(String scenario, Load load, String ours, String peer) {
			List<Double> ratios = new ArrayList<>();
			for (List<Row> round : this.rounds) {
				Row a = find(round, scenario, load, ours);
				Row b = find(round, scenario, load, peer);
				if (a != null && b != null) {
					ratios.add(a.score / b.score);
				}
			}
			return ratios.isEmpty() ? Double.NaN : median(ratios.stream().mapToDouble(Double::doubleValue).toArray());
		}

		static double median(double[] values) {
			if (values.length == 0) {
				return Double.NaN;
			}
			double[] sorted = values.clone();
			java.util.Arrays.sort(sorted);
			int n = sorted.length;
			return (n % 2 == 1) ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
		}

	}

	/** One benchmark result. */
	record Row(String scenario, Load load, String contender, double score, double error, double deniedShare,
			double alloc) {

		static final List<String> SCENARIOS = List.of("one key, one thread", "one key, two threads",
				"10k Zipf keys, two threads", "1M Zipf keys, two threads");

		static Row of(RunResult result) {
			var params = result.getParams();
			String method = params.getBenchmark().substring(params.getBenchmark().lastIndexOf('.') + 1);
			String scenario = switch (method) {
				case "oneThread" -> SCENARIOS.get(0);
				case "twoThreads" -> Objects.equals(params.getParam("keys"), "1000000") ? SCENARIOS.get(3)
						: (params.getParam("keys") != null) ? SCENARIOS.get(2) : SCENARIOS.get(1);
				default -> method;
			};
			return of(result, scenario);
		}

		/** The score of a secondary result of the run, or NaN if the run has none of that name. */
		private static double secondary(RunResult result, String name) {
			Result<?> secondary = result.getSecondaryResults().get(name);
			return (secondary != null) ? secondary.getScore() : Double.NaN;
		}

		static Row of(RunResult result, String scenario) {
			var params = result.getParams();
			Result<?> primary = result.getPrimaryResult();
			double denied = secondary(result, "denied");
			double alloc = secondary(result, "gc.alloc.rate.norm");
			String load = params.getParam("load");
			return new Row(scenario, (load != null) ? Load.valueOf(load) : Load.ALLOWED, params.getParam("contender"),
					primary.getScore(), primary.getScoreError(), denied / primary.getScore(), alloc);
		}

		boolean isOurs() {
			return Character.isUpperCase(this.contender.charAt(0));
		}

		static String bytes(double value) {
			return Double.isNaN(value) ? "?" : (value < 0.5) ? "0" : String.format(Locale.ROOT, "%.0f", value);
		}

	}

}
