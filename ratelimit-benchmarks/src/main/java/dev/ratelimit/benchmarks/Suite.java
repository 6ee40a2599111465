package dev.ratelimit.benchmarks;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.function.Predicate;

/**
 * Runs the benchmark suite and writes its results, with ratios against the peers measured in the same run, as
 * a markdown report.
 * <p>
 * Usage: {@code java -jar benchmarks.jar [quick|full] [--out DIR] [--only memory,footprint,redis,postgres,http]
 * [--wait-quiet SECONDS] [--busy-ok]}, or {@code --help}. The quick mode runs a subset with short iterations in a
 * few minutes; the full mode runs everything.
 * <p>
 * A run starts only on a quiet machine: when the 1-minute load average is above {@value Machine#QUIET_PER_CORE}
 * per core, it waits for it to fall and then refuses, exiting with 3, unless {@code --busy-ok} is given, and then
 * the report says on its first lines that its ratios were measured on a busy machine. Every section states the
 * load at its start and while it ran.
 */
public final class Suite {

	static final String USAGE = String.format(Locale.ROOT, """
			usage: java -jar ratelimit-benchmarks/target/benchmarks.jar [quick|full] [--out DIR] [--only SECTIONS]
			  quick            a subset with short iterations, in a few minutes (the default)
			  full             everything, three rounds
			  --out DIR        where results.md and the raw results go (ratelimit-benchmarks/target/results)
			  --only SECTIONS  a comma-separated subset of memory,footprint,redis,postgres,http (all by default)
			  --wait-quiet S   how long to wait for the 1-minute load average to fall to %.1f per core (%d)
			  --busy-ok        run even if it does not, and mark the report as measured on a busy machine
			  --help, -h       this text
			A run on a busy machine is refused with exit code 3, as its ratios would not compare.
			The redis section starts a redis-server from the PATH, the postgres section a PostgreSQL cluster
			(initdb and pg_ctl from the PATH or /usr/lib/postgresql) unless POSTGRES_URL names a database on
			this machine, and the http section runs wrk from the PATH.""",
			Machine.QUIET_PER_CORE, Options.WAIT_QUIET.toSeconds());

	private static final List<String> SECTIONS = List.of("memory", "footprint", "redis", "postgres", "http");

	private static final Duration LOAD_READINGS = Duration.ofSeconds(5);

	/** Exits with it when the machine is too busy for a run. */
	static final int BUSY = 3;

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
		List<String> missing = missingTools(sections, Suite::onPath);
		if (sections.contains("postgres") && !PostgresServer.available()) {
			missing.add("the postgres section needs POSTGRES_URL, or initdb and pg_ctl on the PATH or in "
					+ "/usr/lib/postgresql/<version>/bin");
		}
		if (!missing.isEmpty()) {
			System.err.println("error: " + String.join("; ", missing) + ": install them, or leave their sections out "
					+ "with --only");
			System.exit(2);
		}
		double threshold = Machine.quietThreshold();
		Machine.LoadAverage before = Machine.awaitQuiet(Machine::loadAverage, threshold,
				1 + (int) (options.waitQuiet().toSeconds() / LOAD_READINGS.toSeconds()), LOAD_READINGS,
				(pause) -> Thread.sleep(pause.toMillis()));
		Quietness quietness = new Quietness(before, threshold);
		if (!quietness.quiet() && !options.busyOk()) {
			System.err.println("error: " + quietness.describe() + ": not running; wait for a quiet machine, or pass "
					+ "--busy-ok to run anyway with the report marked");
			System.exit(BUSY);
		}
		Files.createDirectories(out);
		try (LoadMonitor load = LoadMonitor.start(Machine::loadAverage, LOAD_READINGS)) {
			Report report = new Report(mode, String.join(" ", args), quietness, load);
			if (sections.contains("memory")) {
				report.begin();
				new InMemorySection(mode, out).run(report);
			}
			if (sections.contains("footprint")) {
				report.begin();
				new FootprintSection(mode, out).run(report);
			}
			if (sections.contains("redis")) {
				report.begin();
				new RedisSection(mode, out).run(report);
			}
			if (sections.contains("postgres")) {
				report.begin();
				new PostgresSection(mode, out).run(report);
			}
			if (sections.contains("http")) {
				report.begin();
				new HttpSection(mode, out).run(report);
			}
			publish(out, report);
		}
	}

	/**
	 * The programs each chosen section runs and {@code onPath} does not find, said as "the redis section needs
	 * redis-benchmark": checked before anything runs, so that a missing one does not end a long run without its
	 * report.
	 */
	static List<String> missingTools(Set<String> sections, Predicate<String> onPath) {
		List<String> missing = new ArrayList<>();
		for (String section : sections) {
			List<String> tools = switch (section) {
				case "redis" -> List.of("redis-server", "redis-benchmark");
				case "http" -> List.of("redis-server", "redis-benchmark", "wrk");
				default -> List.of();
			};
			for (String tool : tools) {
				if (!onPath.test(tool)) {
					missing.add("the " + section + " section needs " + tool + " on the PATH");
				}
			}
		}
		return missing;
	}

	private static boolean onPath(String program) {
		String path = System.getenv("PATH");
		return path != null && Arrays.stream(path.split(java.io.File.pathSeparator))
			.anyMatch((dir) -> !dir.isEmpty() && Files.isExecutable(Path.of(dir, program)));
	}

	private static void publish(Path out, Report report) throws IOException {
		Path file = out.resolve("results.md");
		String text = report.render();
		Files.writeString(file, text);
		System.out.println(text);
		System.out.println("Written to " + file.toAbsolutePath());
	}

	/**
	 * The command line, parsed.
	 * @param mode how long the suite may take
	 * @param out where the results go
	 * @param sections which sections run
	 * @param waitQuiet how long to wait for a busy machine to quieten before refusing to run
	 * @param busyOk whether to run on a busy machine, the report marked
	 */
	record Options(Mode mode, Path out, Set<String> sections, Duration waitQuiet, boolean busyOk) {

		/** How long a run waits for a busy machine to quieten unless told. */
		static final Duration WAIT_QUIET = Duration.ofMinutes(3);

		static Options parse(String[] args) {
			Mode mode = Mode.QUICK;
			Path out = Path.of("ratelimit-benchmarks", "target", "results");
			Set<String> sections = new LinkedHashSet<>(SECTIONS);
			Duration waitQuiet = WAIT_QUIET;
			boolean busyOk = false;
			for (int i = 0; i < args.length; i++) {
				switch (args[i]) {
					case "quick" -> mode = Mode.QUICK;
					case "full" -> mode = Mode.FULL;
					case "--out" -> out = Path.of(value(args, ++i, "--out"));
					case "--only" -> sections = sections(value(args, ++i, "--only"));
					case "--wait-quiet" -> waitQuiet = seconds(value(args, ++i, "--wait-quiet"), "--wait-quiet");
					case "--busy-ok" -> busyOk = true;
					default -> throw new IllegalArgumentException("unknown argument '" + args[i] + "'");
				}
			}
			return new Options(mode, out, sections, waitQuiet, busyOk);
		}

		private static Duration seconds(String value, String option) {
			try {
				long seconds = Long.parseLong(value);
				if (seconds >= 0) {
					return Duration.ofSeconds(seconds);
				}
			}
			catch (NumberFormatException ex) {
				// the message below names the value either way
			}
			throw new IllegalArgumentException(option + " takes whole seconds, at least 0, not '" + value + "'");
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

	/**
	 * How busy the machine was when the run began.
	 * @param before the load average then
	 * @param threshold the most 1-minute load average of a quiet machine
	 */
	record Quietness(Machine.LoadAverage before, double threshold) {

		boolean quiet() {
			return this.before.oneMinute() <= this.threshold;
		}

		String describe() {
			return String.format(Locale.ROOT, "load average before the run %s, %s the quiet threshold of %.2f (%.1f per core × %d cores)",
					this.before, quiet() ? "within" : "ABOVE", this.threshold, Machine.QUIET_PER_CORE, Machine.cores());
		}

	}

	/** The markdown report, section after section, with the targets checked along the way. */
	static final class Report {

		private final Mode mode;

		private final String arguments;

		private final Quietness quietness;

		private final LoadMonitor load;

		private final LoadMonitor.Mark run;

		private LoadMonitor.Mark section;

		private final StringBuilder body = new StringBuilder();

		private final List<String[]> targets = new ArrayList<>();

		Report(Mode mode, String arguments, Quietness quietness, LoadMonitor load) {
			this.mode = mode;
			this.arguments = arguments;
			this.quietness = quietness;
			this.load = load;
			this.run = load.mark();
			this.section = this.run;
		}

		/** Starts a section: the load it reports is read from now on. */
		void begin() {
			this.section = this.load.mark();
		}

		/** Adds a section, its heading first, and states under the heading the machine's load while it ran. */
		void section(String markdown) {
			int heading = markdown.indexOf('\n');
			String loadLine = "Load: " + this.load.since(this.section) + ".\n\n";
			if (markdown.startsWith("#") && heading >= 0) {
				this.body.append(markdown, 0, heading + 1).append('\n').append(loadLine)
					.append(markdown.substring(heading + 1).stripLeading());
			}
			else {
				this.body.append(loadLine).append(markdown);
			}
			this.body.append('\n');
			this.section = this.load.mark();
		}

		/** Records a target: what, the measured figure, and whether it is met (null when not measured). */
		void target(String what, String measured, Boolean met) {
			this.targets.add(new String[] { what, measured,
					(met == null) ? "not measured" : met ? "**met**" : "**missed**" });
		}

		String render() {
			StringBuilder md = new StringBuilder();
			md.append("# Benchmark results\n\n");
			if (!this.quietness.quiet()) {
				md.append("> **BUSY MACHINE: every ratio below was measured while other processes ran** (")
					.append(this.quietness.describe()).append(", run with `--busy-ok`). Compare it with no run ")
					.append("made on a quiet machine.\n\n");
			}
			md.append("- date: ")
				.append(LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm")))
				.append('\n');
			md.append("- machine: ").append(Machine.describe()).append('\n');
			md.append("- ").append(this.quietness.describe()).append('\n');
			md.append("- load during the whole run: ").append(this.load.since(this.run)).append('\n');
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
