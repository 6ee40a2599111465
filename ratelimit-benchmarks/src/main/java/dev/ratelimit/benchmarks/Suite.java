package dev.ratelimit.benchmarks;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * Runs the benchmark suite and writes its results, with ratios against the peers measured in the same run, as
 * a markdown report.
 * <p>
 * Usage: {@code java -jar benchmarks.jar [quick|full] [--out DIR] [--only memory,footprint,redis,http]}, or
 * {@code --help}. The quick mode runs a subset with short iterations in a few minutes; the full mode runs
 * everything.
 */
public final class Suite {

	static final String USAGE = """
			usage: java -jar ratelimit-benchmarks/target/benchmarks.jar [quick|full] [--out DIR] [--only SECTIONS]
			  quick            a subset with short iterations, in a few minutes (the default)
			  full             everything, three rounds
			  --out DIR        where results.md and the raw results go (ratelimit-benchmarks/target/results)
			  --only SECTIONS  a comma-separated subset of memory,footprint,redis,http (all by default)
			  --help, -h       this text
			The redis section starts a redis-server from the PATH, the http section runs wrk from the PATH.""";

	private static final List<String> SECTIONS = List.of("memory", "footprint", "redis", "http");

	private Suite() {
	}

	public static void main(String[] args) throws Exception {
		CommandLine.helpIfAsked(args, USAGE);
		Options options = null;
		try {
			options = Options.parse(args);
		}
		catch (IllegalArgumentException ex) {
			CommandLine.fail(ex, USAGE);
		}
		run(options, args);
	}

	private static void run(Options options, String[] args) throws Exception {
		Mode mode = options.mode();
		Path out = options.out();
		Set<String> sections = options.sections();
		Files.createDirectories(out);
		Report report = new Report(mode, String.join(" ", args));
		if (sections.contains("memory")) {
			new InMemorySection(mode, out).run(report);
		}
		if (sections.contains("footprint")) {
			new FootprintSection(mode, out).run(report);
		}
		if (sections.contains("redis")) {
			new RedisSection(mode, out).run(report);
		}
		if (sections.contains("http")) {
			new HttpSection(mode, out).run(report);
		}
		Path file = out.resolve("results.md");
		Files.writeString(file, report.render());
		System.out.println(report.render());
		System.out.println("Written to " + file.toAbsolutePath());
	}

	/**
	 * The command line, parsed.
	 * @param mode how long the suite may take
	 * @param out where the results go
	 * @param sections which sections run
	 */
	record Options(Mode mode, Path out, Set<String> sections) {

		static Options parse(String[] args) {
			Mode mode = Mode.QUICK;
			Path out = Path.of("ratelimit-benchmarks", "target", "results");
			Set<String> sections = new LinkedHashSet<>(SECTIONS);
			for (int i = 0; i < args.length; i++) {
				switch (args[i]) {
					case "quick" -> mode = Mode.QUICK;
					case "full" -> mode = Mode.FULL;
					case "--out" -> out = Path.of(value(args, ++i, "--out"));
					case "--only" -> sections = sections(value(args, ++i, "--only"));
					default -> throw new IllegalArgumentException("unknown argument '" + args[i] + "'");
				}
			}
			return new Options(mode, out, sections);
		}

		private static String value(String[] args, int index, String option) {
			if (index >= args.length) {
				throw new IllegalArgumentException(option + " needs a value");
			}
			return args[index];
		}

		private static Set<String> sections(String list) {
			Set<String> sections = new LinkedHashSet<>(Arrays.asList(list.split(",")));
			for (String section : sections) {
				if (!SECTIONS.contains(section)) {
					throw new IllegalArgumentException(
							"unknown section '" + section + "' in --only, expected some of " + SECTIONS);
				}
			}
			return sections;
		}

	}

	/** How long the suite may take. */
	enum Mode {

		/** A subset, one round, one fork, 2 warmup and 3 measured iterations of 1 s each. */
		QUICK(1, 2, 3),

		/**
		 * Everything, three rounds, each with one fork per benchmark, 2 warmup and 2 measured iterations of 1 s.
		 */
		FULL(3, 2, 2);

		/**
		 * How many times every benchmark runs, all of them once per round: a ratio is the median of the ratios
		 * within each round, so that a burst of load from other processes spoils one round at most.
		 */
		final int rounds;

		final int warmups;

		final int iterations;

		Mode(int rounds, int warmups, int iterations) {
			this.rounds = rounds;
			this.warmups = warmups;
			this.iterations = iterations;
		}

		String describe() {
			return name().toLowerCase(Locale.ROOT) + ": " + this.rounds + ((this.rounds == 1) ? " round" : " rounds")
					+ " of 1 fork per benchmark, " + this.warmups + " warmup and " + this.iterations
					+ " measured iterations of 1 s each";
		}

	}

	/** The markdown report, section after section, with the targets checked along the way. */
	static final class Report {

		private final Mode mode;

		private final String arguments;

		private final StringBuilder body = new StringBuilder();

		private final List<String[]> targets = new ArrayList<>();

		Report(Mode mode, String arguments) {
			this.mode = mode;
			this.arguments = arguments;
		}

		void section(String markdown) {
			this.body.append(markdown).append('\n');
		}

		/** Records a target: what, the measured figure, and whether it is met (null when not measured). */
		void target(String what, String measured, Boolean met) {
			this.targets.add(new String[] { what, measured,
					(met == null) ? "not measured" : met ? "**met**" : "**missed**" });
		}

		String render() {
			StringBuilder md = new StringBuilder();
			md.append("# Benchmark results\n\n");
			md.append("- date: ")
				.append(LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm")))
				.append('\n');
			md.append("- machine: ").append(Machine.describe()).append('\n');
			md.append("- mode: ").append(this.mode.describe()).append('\n');
			md.append("- arguments: `").append(this.arguments.isEmpty() ? "quick" : this.arguments).append("`\n\n");
			if (!this.targets.isEmpty()) {
				md.append("## Targets\n\n| target | measured | verdict |\n|---|---|---|\n");
				for (String[] target : this.targets) {
					md.append("| ").append(String.join(" | ", target)).append(" |\n");
				}
				md.append('\n');
			}
			md.append(this.body);
			return md.toString();
		}

	}

	static void write(Path file, String text) {
		try {
			Files.writeString(file, text);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

}
