package dev.ratelimit.core.replay;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.io.Reader;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.Decision;
import dev.ratelimit.core.ManualTimeSource;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.RateLimiter;
import dev.ratelimit.core.memory.InMemoryRateLimitStore;

/**
 * Replays a trace of requests through the algorithms, on a manual clock, and prints every decision as CSV or a
 * summary table, and draws them as an SVG picture if asked.
 * <p>
 * Usage: {@code java -jar ratelimit-core.jar --limit 10 --window 10s [--burst N] [--algorithm NAME|all]
 * [--summary] [--svg FILE] < trace}. A trace has one request per line, {@code <seconds> [key]}, with
 * non-decreasing decimal seconds; blank lines and lines starting with {@code #} are skipped. A bad argument or a
 * bad trace exits with status 2 and prints no result.
 */
public final class Replay {

	private static final String SHARED_KEY = "-";

	private static final String USAGE = "usage: java -jar ratelimit-core.jar --limit N --window DURATION"
			+ " [--burst N] [--algorithm NAME|all] [--summary] [--svg FILE] < trace";

	private static final String HELP = """
			Replays a trace of requests through every algorithm (or the one named), on a manual clock.
			A trace has one request per line, <seconds> [key], seconds non-decreasing; blank lines and lines
			starting with # are skipped. DURATION is 500ms, 10s, 1m, 1h, 1d or ISO-8601 (PT10S).
			  --limit N          permits per window (required)
			  --window DURATION  the window (required)
			  --burst N          capacity of the bucket algorithms; the limit by default
			  --algorithm NAME   one algorithm, such as GCRA, or all (the default)
			  --summary          one line per algorithm instead of every decision as CSV
			  --svg FILE         also draws the decisions, one lane per algorithm, as an SVG picture
			  --help, -h         this text
			Exits with 0, or 2 after a bad argument or a bad trace.""";

	private Replay() {
	}

	/**
	 * Runs the tool on standard input and output, exiting with its status.
	 * @param args the command line
	 */
	public static void main(String[] args) {
		int status = run(args, new InputStreamReader(System.in, StandardCharsets.UTF_8), System.out, System.err);
		System.out.flush();
		System.exit(status);
	}

	/**
	 * Runs the tool.
	 * @param args the command line
	 * @param in the trace
	 * @param out where results go
	 * @param err where errors go
	 * @return the exit status: 0, or 2 for bad arguments or a bad trace
	 */
	public static int run(String[] args, Reader in, PrintStream out, PrintStream err) {
		if (List.of(args).contains("--help") || List.of(args).contains("-h")) {
			out.println(USAGE);
			out.println(HELP);
			return 0;
		}
		try {
			Options options = Options.parse(args);
			List<Request> trace = read(in);
			if (options.summary) {
				printSummary(options, trace, out);
			}
			else {
				printCsv(options, trace, out);
			}
			if (options.svg != null) {
				Files.writeString(options.svg, picture(options, trace), StandardCharsets.UTF_8);
			}
			return 0;
		}
		catch (IllegalArgumentException ex) {
			err.println("error: " + ex.getMessage());
			if (ex instanceof UsageException) {
				err.println(USAGE);
			}
			return 2;
		}
		catch (IOException ex) {
			err.println("error: cannot read the trace or write the picture: " + ex);
			return 2;
		}
	}

	private static List<Request> read(Reader in) throws IOException {
		BufferedReader reader = new BufferedReader(in);
		List<Request> trace = new ArrayList<>();
		long previous = 0;
		int number = 0;
		for (String line = reader.readLine(); line != null; line = reader.readLine()) {
			number++;
			String text = line.strip();
			if (text.isEmpty() || text.startsWith("#")) {
				continue;
			}
			String[] fields = text.split("\\s+");
			if (fields.length > 2) {
				throw new IllegalArgumentException("line " + number + ": expected '<seconds> [key]', found '" + text + "'");
			}
			long nanos = nanos(fields[0], number);
			if (nanos < previous) {
				throw new IllegalArgumentException("line " + number + ": time " + fields[0]
						+ " goes back before the previous request's; times must not decrease");
			}
			previous = nanos;
			trace.add(new Request(nanos, (fields.length == 2) ? fields[1] : SHARED_KEY));
		}
		return trace;
	}

	private static long nanos(String seconds, int line) {
		try {
			BigDecimal value = new BigDecimal(seconds);
			if (value.signum() < 0) {
				throw new IllegalArgumentException("line " + line + ": time " + seconds + " is negative");
			}
			return value.movePointRight(9).longValueExact();
		}
		catch (NumberFormatException ex) {
			throw new IllegalArgumentException("line " + line + ": '" + seconds + "' is not a time in seconds");
		}
		catch (ArithmeticException ex) {
			throw new IllegalArgumentException(
					"line " + line + ": time " + seconds + " is finer than a nanosecond or too large");
		}
	}

	private static void printCsv(Options options, List<Request> trace, PrintStream out) {
		out.println("algorithm,time,key,allowed,delay");
		for (Algorithm algorithm : options.algorithms) {
			Run run = Run.start(options, algorithm);
			for (Request request : trace) {
				Decision decision = run.decide(request);
				out.printf(Locale.ROOT, "%s,%.3f,%s,%s,%.6f%n", algorithm, request.nanos / 1e9, request.key,
						decision.allowed(), decision.delayNanos() / 1e9);
			}
		}
	}

	private static void printSummary(Options options, List<Request> trace, PrintStream out) {
		out.printf(Locale.ROOT, "%s%n%n", title(options, trace));
		out.printf(Locale.ROOT, "%-24s %9s %9s %9s %13s %15s%n", "algorithm", "requests", "allowed", "rejected",
				"max/window", "longest delay");
		for (Algorithm algorithm : options.algorithms) {
			Run run = Run.start(options, algorithm);
			Map<String, List<Long>> served = new HashMap<>();
			int allowed = 0;
			long longestDelay = 0;
			for (Request request : trace) {
				Decision decision = run.decide(request);
				if (decision.allowed()) {
					allowed++;
					longestDelay = Math.max(longestDelay, decision.delayNanos());
					served.computeIfAbsent(request.key, (k) -> new ArrayList<>())
						.add(request.nanos + decision.delayNanos());
				}
			}
			int most = 0;
			for (List<Long> times : served.values()) {
				most = Math.max(most, mostWithin(times, options.window.toNanos()));
			}
			out.printf(Locale.ROOT, "%-24s %9d %9d %9d %13d %13.3f s%n", algorithm, trace.size(), allowed,
					trace.size() - allowed, most, longestDelay / 1e9);
		}
		out.printf("%nmax/window: most requests of one key allowed in any window-long span, counted when they are"
				+ " served (for the leaky bucket, after their delay)%n");
	}

	private static String title(Options options, List<Request> trace) {
		return String.format(Locale.ROOT, "%d requests, limit %d per %s%s", trace.size(), options.limit,
				format(options.window), (options.burst != null) ? ", burst " + options.burst : "");
	}

	/** The decisions of every algorithm on the trace, drawn one lane each. */
	private static String picture(Options options, List<Request> trace) {
		List<Picture.Lane> lanes = new ArrayList<>();
		for (Algorithm algorithm : options.algorithms) {
			Run run = Run.start(options, algorithm);
			List<Picture.Mark> marks = new ArrayList<>(trace.size());
			for (Request request : trace) {
				Decision decision = run.decide(request);
				marks.add(new Picture.Mark(request.nanos, decision.allowed(), decision.delayNanos()));
			}
			lanes.add(new Picture.Lane(algorithm.name(), marks));
		}
		return Picture.svg(title(options, trace), lanes, options.window.toNanos());
	}

	/** The most times within any span shorter than {@code window}; times are sorted, as served in order. */
	private static int mostWithin(List<Long> times, long window) {
		int most = 0;
		for (int end = 0, start = 0; end < times.size(); end++) {
			while (times.get(end) - times.get(start) >= window) {
				start++;
			}
			most = Math.max(most, end - start + 1);
		}
		return most;
	}

	private static RateLimitPolicy policy(Options options, Algorithm algorithm) {
		RateLimitPolicy policy = RateLimitPolicy.of("replay", algorithm, options.limit, options.window);
		boolean hasBurst = switch (algorithm) {
			case TOKEN_BUCKET, LEAKY_BUCKET, GCRA -> true;
			case FIXED_WINDOW, SLIDING_LOG, SLIDING_WINDOW_COUNTER -> false;
		};
		return (options.burst != null && hasBurst) ? policy.withBurst(options.burst) : policy;
	}

	private static String format(Duration window) {
		return window.toString().substring(2).toLowerCase(Locale.ROOT);
	}

	private record Request(long nanos, String key) {
	}

	/** One algorithm's limiter on a fresh store and the clock it reads. */
	private record Run(RateLimiter limiter, ManualTimeSource clock) {

		static Run start(Options options, Algorithm algorithm) {
			ManualTimeSource clock = new ManualTimeSource();
			InMemoryRateLimitStore store = InMemoryRateLimitStore.builder()
				.timeSource(clock)
				.maxKeys(Integer.MAX_VALUE)
				.build();
			return new Run(store.limiter(policy(options, algorithm)), clock);
		}

		Decision decide(Request request) {
			this.clock.set(request.nanos);
			return this.limiter.decide(request.key);
		}

	}

	private static final class UsageException extends IllegalArgumentException {

		UsageException(String message) {
			super(message);
		}

	}

	private static final class Options {

		long limit = -1;

		Duration window = Duration.ZERO;

		Long burst;

		List<Algorithm> algorithms = List.of(Algorithm.values());

		boolean summary;

		Path svg;

		static Options parse(String[] args) {
			Options options = new Options();
			boolean windowGiven = false;
			for (int i = 0; i < args.length; i++) {
				String arg = args[i];
				switch (arg) {
					case "--summary" -> options.summary = true;
					case "--svg" -> options.svg = Path.of(value(args, ++i, arg));
					case "--limit" -> options.limit = number(arg, value(args, ++i, arg));
					case "--burst" -> options.burst = number(arg, value(args, ++i, arg));
					case "--window" -> {
						options.window = RateLimitPolicy.parseWindow(value(args, ++i, arg));
						windowGiven = true;
					}
					case "--algorithm" -> options.algorithms = algorithms(value(args, ++i, arg));
					default -> throw new UsageException("unknown argument '" + arg + "'");
				}
			}
			if (options.limit < 0 || !windowGiven) {
				throw new UsageException("--limit and --window are required");
			}
			// build the policies now so that a bad limit, window or burst is reported before any output
			for (Algorithm algorithm : options.algorithms) {
				policy(options, algorithm);
			}
			return options;
		}

		private static String value(String[] args, int index, String option) {
			if (index >= args.length) {
				throw new UsageException(option + " needs a value");
			}
			return args[index];
		}

		private static long number(String option, String value) {
			try {
				return Long.parseLong(value);
			}
			catch (NumberFormatException ex) {
				throw new UsageException(option + " must be a whole number, was '" + value + "'");
			}
		}

		private static List<Algorithm> algorithms(String value) {
			if (value.equalsIgnoreCase("all")) {
				return List.of(Algorithm.values());
			}
			try {
				return List.of(Algorithm.valueOf(value.toUpperCase(Locale.ROOT).replace('-', '_')));
			}
			catch (IllegalArgumentException ex) {
				throw new UsageException("unknown algorithm '" + value + "', expected one of "
						+ List.of(Algorithm.values()) + " or all");
			}
		}

	}

}
