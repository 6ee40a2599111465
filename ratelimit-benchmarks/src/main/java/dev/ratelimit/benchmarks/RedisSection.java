package dev.ratelimit.benchmarks;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.ToDoubleFunction;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.RateLimiter;
import dev.ratelimit.core.redis.RedisRateLimitStore;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.results.format.ResultFormatType;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.ChainedOptionsBuilder;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;

/**
 * The Redis benchmarks against a {@code redis-server} started on a free loopback port: decisions per second
 * through our store, on Lettuce and on Jedis, through Bucket4j's Lettuce backend and through Spring Cloud
 * Gateway's {@code RedisRateLimiter}, {@code redis-benchmark} running the same script as the ceiling and to read
 * each script's Redis CPU per call, the gateway's included, the Redis calls and decisions per second of one
 * exhausted hot key with our store's local denial and without it, and the memory a key takes in Redis.
 */
final class RedisSection {

	private static final String[] QUICK = { "GCRA", "TOKEN_BUCKET", "GCRA-jedis", "TOKEN_BUCKET-jedis", "bucket4j",
			RedisContender.GATEWAY };

	/** Ours on Lettuce that the gateway's limiter, a token bucket too, is judged against. */
	private static final String[] BUCKETS = { "GCRA", "TOKEN_BUCKET" };

	/** Ours on each client, each judged against Bucket4j's Redis backend. */
	private static final String[] TARGETED = { "GCRA", "TOKEN_BUCKET", "GCRA-jedis", "TOKEN_BUCKET-jedis" };

	private static final String[] SCRIPTS = { "GCRA", "TOKEN_BUCKET", "FIXED_WINDOW", "SLIDING_WINDOW_COUNTER",
			"SLIDING_LOG", "LEAKY_BUCKET", RedisContender.GATEWAY };

	private static final int IN_FLIGHT = 128;

	private static final int MEMORY_KEYS = 100_000;

	private static final Pattern RATE = Pattern.compile("([0-9.]+) requests per second");

	private static final List<String> SCENARIOS = List.of("uncontended keys, one thread",
			"uncontended keys, 16 threads", "uncontended keys, " + IN_FLIGHT + " threads in flight",
			"one hot key, 64 threads");

	/** The median time of one decision, uncontended keys and one thread. */
	private static final String LATENCY = "uncontended keys, one thread, in turns, median time per decision";

	private final Suite.Mode mode;

	private final Path out;

	RedisSection(Suite.Mode mode, Path out) {
		this.mode = mode;
		this.out = out;
	}

	void run(Suite.Report report) throws Exception {
		try (RedisServer redis = RedisServer.start()) {
			String version = redis.info("server", "redis_version");
			List<List<InMemorySection.Row>> rounds = new ArrayList<>();
			List<Map<String, Double>> ceilings = new ArrayList<>();
			List<ExhaustedHotKey.Round> exhausted = new ArrayList<>();
			for (int round = 1; round <= this.mode.rounds; round++) {
				Map<String, Double> ceiling = new LinkedHashMap<>();
				rounds.add(round(redis, round, ceiling));
				ceilings.add(ceiling);
				exhausted.add(ExhaustedHotKey.measure(redis, round, exhaustedTime()));
				redis.command("FLUSHALL");
			}
			InMemorySection.Results results = new InMemorySection.Results(rounds);
			StringBuilder md = new StringBuilder("## Redis\n\n");
			md.append("Redis ").append(version).append(" on 127.0.0.1, persistence off, started by the suite. ")
				.append("Decisions per second through `tryAcquire(key)`, each caller waiting for its answer; the policy ")
				.append("is the in-memory ALLOWED load (every call allowed). Uncontended calls use keys of their own ")
				.append("thread; the hot key is one key for every caller. A contender on Lettuce shares one connection ")
				.append("between all its threads (so the threads are the requests in flight): ours through a plain ")
				.append("Lettuce executor, `GCRA-spring` through the starter's Spring Data Redis executor, and Bucket4j, ")
				.append("its Lettuce compare-and-swap backend with the same limit and burst. `gateway` is Spring Cloud ")
				.append("Gateway's `RedisRateLimiter` with its own script and a `ReactiveStringRedisTemplate`, a token ")
				.append("bucket of the same rate per second (10^8), one token a request, each `isAllowed(route, key)` ")
				.append("blocked on by its caller; it refuses a burst below one second of its rate, so its burst is ")
				.append("10^8, the least it takes, where ours holds 1 ms of tokens: under this load every call is ")
				.append("allowed either way, and its script reads and writes its two keys on every call. The `-jedis` contenders ")
				.append("are ours through the starter's Jedis executor, which calls Redis on the caller's thread; a ")
				.append("Jedis connection carries one call at a time, so each thread takes one from a pool of ")
				.append(RedisContender.JEDIS_CONNECTIONS).append(" for the length of its call. Every ratio is against Bucket4j on Lettuce: for the `-jedis` rows the ")
				.append("clients differ, so their ratios show what moving both the client and the limiter gains, not ")
				.append("the limiter alone. Figures are medians over rounds and a ratio is the median of in-round ")
				.append("ratios.\n\n");
			md.append(table(results));
			md.append(latencyTable(results));
			md.append(ceilingTable(results, ceilings, report));
			redisTargets(results, report);
			md.append(exhaustedTable(exhausted, report));
			md.append(memory(redis, report));
			report.section(md.toString());
		}
	}

	/**
	 * Runs every benchmark once. Each script's {@value #IN_FLIGHT} calls in flight run right next to
	 * {@code redis-benchmark} running the same script, first one and then the other in turn, so that their ratio
	 * compares two measurements taken seconds apart rather than minutes.
	 */
	private List<InMemorySection.Row> round(RedisServer redis, int round, Map<String, Double> ceilings)
			throws Exception {
		List<InMemorySection.Row> rows = new ArrayList<>(
				jmh(redis, round, "main", "oneThread|sixteenThreads|hotKey64", contenders()));
		redis.command("FLUSHALL");
		String[] timed = Stream.concat(Stream.of(RedisContender.FLOORS), Stream.of(contenders())).toArray(String[]::new);
		InterleavedLatency.medians(redis.port, timed, 50, (this.mode == Suite.Mode.QUICK) ? 30 : 60)
			.forEach((contender, micros) -> rows
				.add(new InMemorySection.Row(LATENCY, Load.ALLOWED, contender, micros, 0, Double.NaN, Double.NaN)));
		redis.command("FLUSHALL");
		List<String> scripts = List.of(scripts());
		for (int i = 0; i < scripts.size(); i++) {
			String algorithm = scripts.get(i);
			boolean oursFirst = (round + i) % 2 == 0;
			if (!oursFirst) {
				ceilings.putAll(redisBenchmark(redis, algorithm));
			}
			rows.addAll(jmh(redis, round, algorithm, "inFlight128", algorithm));
			redis.command("FLUSHALL");
			if (oursFirst) {
				ceilings.putAll(redisBenchmark(redis, algorithm));
			}
			redis.command("FLUSHALL");
		}
		String[] others = Arrays.stream(contenders()).filter((contender) -> !scripts.contains(contender))
			.toArray(String[]::new);
		rows.addAll(jmh(redis, round, "clients", "inFlight128", others));
		redis.command("FLUSHALL");
		return rows;
	}

	/** Every contender of {@link RedisBenchmark}, or the quick subset. */
	private String[] contenders() throws NoSuchFieldException {
		return (this.mode == Suite.Mode.QUICK) ? QUICK
				: RedisBenchmark.class.getField("contender").getAnnotation(Param.class).value();
	}

	private List<InMemorySection.Row> jmh(RedisServer redis, int round, String part, String methods,
			String... contenders) throws RunnerException {
		ChainedOptionsBuilder options = new OptionsBuilder()
			.include(RedisBenchmark.class.getName() + "\\.(" + methods + ")$")
			.param("contender", contenders)
			.forks(1)
			.warmupIterations(this.mode.warmups)
			.warmupTime(TimeValue.seconds(1))
			.measurementIterations(this.mode.iterations)
			.measurementTime(TimeValue.seconds(1))
			.jvmArgsAppend("-Xmx1g", "-Dbench.redis.port=" + redis.port)
			.resultFormat(ResultFormatType.JSON)
			.result(this.out.resolve("jmh-redis-" + round + "-" + part + ".json").toString());
		List<InMemorySection.Row> rows = new ArrayList<>();
		for (RunResult result : new Runner(options.build()).run()) {
			String benchmark = result.getParams().getBenchmark();
			String scenario = switch (benchmark.substring(benchmark.lastIndexOf('.') + 1)) {
				case "oneThread" -> SCENARIOS.get(0);
				case "sixteenThreads" -> SCENARIOS.get(1);
				case "inFlight128" -> SCENARIOS.get(2);
				default -> SCENARIOS.get(3);
			};
			rows.add(InMemorySection.Row.of(result, scenario));
		}
		return rows;
	}

	private static String table(InMemorySection.Results results) {
		StringBuilder md = new StringBuilder();
		md.append("| contender | client |");
		SCENARIOS.forEach((scenario) -> md.append(' ').append(scenario).append(" |"));
		SCENARIOS.forEach((scenario) -> md.append(" × bucket4j, ").append(scenario).append(" |"));
		md.append("\n|---|---|").append("--:|".repeat(2 * SCENARIOS.size())).append('\n');
		List<String> contenders = results.medians().stream().map(InMemorySection.Row::contender).distinct()
			.filter((contender) -> !contender.startsWith("floor-"))
			.toList();
		for (String contender : contenders) {
			md.append("| ").append(contender).append(" | ").append(client(contender)).append(" |");
			for (String scenario : SCENARIOS) {
				InMemorySection.Row row = InMemorySection.find(results.medians(), scenario, Load.ALLOWED, contender);
				md.append(' ')
					.append((row != null) ? String.format(Locale.ROOT, "%,.0f ± %,.0f", row.score(), row.error()) : "")
					.append(" |");
			}
			for (String scenario : SCENARIOS) {
				double ratio = contender.equals("bucket4j") ? Double.NaN
						: results.ratio(scenario, Load.ALLOWED, contender, "bucket4j");
				md.append(' ').append(Double.isNaN(ratio) ? "" : String.format(Locale.ROOT, "%.2f", ratio)).append(" |");
			}
			md.append('\n');
		}
		return md.append('\n').toString();
	}

	private static String latencyTable(InMemorySection.Results results) {
		StringBuilder md = new StringBuilder("### One thread, time per decision\n\n");
		md.append("One caller, one call at a time, every contender taking turns on the same Redis: ")
			.append("blocks of 100 calls through each contender in turn, each call timed, 50 turns to warm up and ")
			.append("then the turns timed. JMH runs the contenders one after the other, a minute or more apart, and ")
			.append("on this machine the round trip itself changes from one minute to the next by more than the ")
			.append("difference between the contenders; taking turns every few milliseconds, and taking the median ")
			.append("of each contender's calls, which a stall moves far less than a throughput, compares them on ")
			.append("the same machine. The `floor-` rows are no limiters: they time, waited for in the same way on a ")
			.append("Lettuce connection, a `PING`, a script that returns 1, and a script that makes only the three ")
			.append("calls every one of our scripts makes (`TIME`, `GET`, `SET … PX`). Bucket4j's median over a ")
			.append("floor's is the most a limiter deciding in that one round trip could reach against Bucket4j's ")
			.append("two. Figures are medians over rounds, ± half their spread, and a ratio is the median of ")
			.append("in-round ratios.\n\n");
		md.append("| contender | client | median µs per call | ± | bucket4j's median / this one's |\n|---|---|--:|--:|--:|\n");
		List<InMemorySection.Row> rows = new ArrayList<>(results.medians());
		// the floors last
		rows.sort(Comparator.comparing((InMemorySection.Row row) -> row.contender().startsWith("floor-")));
		for (InMemorySection.Row row : rows) {
			if (row.scenario().equals(LATENCY)) {
				double ratio = row.contender().equals("bucket4j") ? Double.NaN
						: results.ratio(LATENCY, Load.ALLOWED, "bucket4j", row.contender());
				md.append(String.format(Locale.ROOT, "| %s | %s | %.0f | %.0f | %s |%n", row.contender(),
						client(row.contender()), row.score(), row.error(),
						Double.isNaN(ratio) ? "" : String.format(Locale.ROOT, "%.2f", ratio)));
			}
		}
		return md.append('\n').toString();
	}

	private static String client(String contender) {
		if (contender.startsWith("floor-")) {
			return "Lettuce, no limiter";
		}
		if (contender.equals(RedisContender.GATEWAY)) {
			return "Lettuce, through Spring Data Redis' reactive template";
		}
		if (contender.endsWith("-jedis")) {
			return "Jedis";
		}
		return contender.endsWith("-spring") ? "Lettuce, through Spring Data Redis" : "Lettuce";
	}

	private static void redisTargets(InMemorySection.Results results, Suite.Report report) {
		for (String ours : TARGETED) {
			for (int i : new int[] { 0, 1 }) {
				ratioTarget(report, results, ours, SCENARIOS.get(i), 1.8);
			}
			ratioTarget(report, results, ours, LATENCY, 1.8);
			ratioTarget(report, results, ours, SCENARIOS.get(3), 10);
		}
		for (String ours : BUCKETS) {
			double ratio = results.ratio(SCENARIOS.get(2), Load.ALLOWED, ours, RedisContender.GATEWAY);
			report.target(String.format(Locale.ROOT,
					"Redis, %s, %s: ≥ 1.3× Spring Cloud Gateway's RedisRateLimiter (ours on Lettuce, the gateway on "
							+ "Spring Data Redis' reactive template over Lettuce)", ours, SCENARIOS.get(2)),
					Double.isNaN(ratio) ? "" : String.format(Locale.ROOT, "%.2f×", ratio),
					Double.isNaN(ratio) ? null : ratio >= 1.3);
		}
	}

	/** A target of ours against Bucket4j, which names the clients so that a pairing of unlike ones shows. */
	private static void ratioTarget(Suite.Report report, InMemorySection.Results results, String ours,
			String scenario, double wanted) {
		// a time per decision is better when lower: Bucket4j's over ours
		double ratio = scenario.equals(LATENCY) ? results.ratio(scenario, Load.ALLOWED, "bucket4j", ours)
				: results.ratio(scenario, Load.ALLOWED, ours, "bucket4j");
		String clients = client(ours).equals(client("bucket4j")) ? "both on " + client(ours)
				: "ours on " + client(ours) + ", Bucket4j on " + client("bucket4j") + ": the clients differ";
		report.target(String.format(Locale.ROOT, "Redis, %s, %s: ≥ %.1f× Bucket4j's Redis backend (%s)",
				ours.replace("-jedis", ""), scenario, wanted, clients),
				Double.isNaN(ratio) ? "" : String.format(Locale.ROOT, "%.2f×", ratio),
				Double.isNaN(ratio) ? null : ratio >= wanted);
	}

	/**
	 * Runs a script with {@code redis-benchmark} at the same number of requests in flight: its rate, and Redis'
	 * CPU time per call ({@code <algorithm>.micros}).
	 */
	private Map<String, Double> redisBenchmark(RedisServer redis, String algorithm)
			throws IOException, InterruptedException {
		RateLimitPolicy policy = Load.ALLOWED.peerPolicy();
		String sha = redis.command("SCRIPT", "LOAD", script(algorithm));
		List<String> command = new ArrayList<>(List.of("redis-benchmark", "-h", "127.0.0.1", "-p",
				Integer.toString(redis.port), "-c", Integer.toString(IN_FLIGHT), "-n",
				(this.mode == Suite.Mode.QUICK) ? "100000" : "200000", "-r", "1000000", "-q", "EVALSHA", sha));
		if (algorithm.equals(RedisContender.GATEWAY)) {
			// the keys and arguments RedisRateLimiter passes: rate per second, burst, no time (Redis' own), tokens
			var config = GatewayLimiter.config(policy);
			command.addAll(List.of("2", "request_rate_limiter.{user:__rand_int__}.tokens",
					"request_rate_limiter.{user:__rand_int__}.timestamp", Integer.toString(config.getReplenishRate()),
					Long.toString(config.getBurstCapacity()), "", Integer.toString(config.getRequestedTokens())));
		}
		else {
			command.addAll(List.of("1", "ratelimit:{user:__rand_int__}:bench", Long.toString(policy.limit()),
					Long.toString(policy.windowMicros()), Long.toString(policy.burst()), "1", ""));
			if (algorithm.equals("LEAKY_BUCKET")) {
				command.add("0");
			}
		}
		redis.command("CONFIG", "RESETSTAT");
		Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
		String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
		process.waitFor();
		Matcher matcher = RATE.matcher(output);
		double rate = Double.NaN;
		while (matcher.find()) {
			rate = Double.parseDouble(matcher.group(1));
		}
		double micros = redis.commandStat("evalsha", "usec_per_call");
		System.out.println("redis-benchmark " + algorithm + ": " + rate + " requests/s, " + micros + " µs in Redis");
		return Map.of(algorithm, rate, algorithm + ".micros", micros);
	}

	private String[] scripts() {
		return (this.mode == Suite.Mode.QUICK) ? new String[] { "GCRA", "TOKEN_BUCKET", RedisContender.GATEWAY }
				: SCRIPTS;
	}

	private String ceilingTable(InMemorySection.Results results, List<Map<String, Double>> ceilings,
			Suite.Report report) {
		StringBuilder md = new StringBuilder("### Against `redis-benchmark` running the same script\n\n");
		md.append("`redis-benchmark -c ").append(IN_FLIGHT)
			.append(" -r 1000000 EVALSHA <sha> 1 ratelimit:{user:__rand_int__}:bench <the same ARGV>`: the same ")
			.append(IN_FLIGHT).append(" requests in flight, from C, without any client logic; our figure is the ")
			.append(IN_FLIGHT).append("-thread one above on Lettuce, whose one connection carries every call in ")
			.append("flight. In each round the two run back to back, which one first alternating, and the ratio is ")
			.append("the median of the in-round ratios. The Jedis executor is not meant for that: it holds a connection of its own for each call ")
			.append("in flight, ").append(IN_FLIGHT).append(" here; its ").append(IN_FLIGHT)
			.append("-thread figures are in the table above. The `gateway` row is Spring Cloud Gateway's script with ")
			.append("the keys and arguments its `RedisRateLimiter` passes, and its limiter through its reactive ")
			.append("template.\n\n");
		md.append("| script | Redis CPU per call (µs, `INFO commandstats`) | redis-benchmark (calls/s) | limiter (decisions/s) | limiter / redis-benchmark |\n|---|--:|--:|--:|--:|\n");
		Map<String, Double> cpu = new LinkedHashMap<>();
		for (String algorithm : scripts()) {
			List<Double> ratios = new ArrayList<>();
			List<Double> ceiling = new ArrayList<>();
			for (int round = 0; round < ceilings.size(); round++) {
				Double rate = ceilings.get(round).get(algorithm);
				InMemorySection.Row ours = InMemorySection.find(results.roundRows(round), SCENARIOS.get(2), Load.ALLOWED,
						algorithm);
				ceiling.add(rate);
				if (rate != null && ours != null) {
					ratios.add(ours.score() / rate);
				}
			}
			InMemorySection.Row ours = InMemorySection.find(results.medians(), SCENARIOS.get(2), Load.ALLOWED, algorithm);
			double ratio = InMemorySection.Results.median(ratios.stream().mapToDouble(Double::doubleValue).toArray());
			double micros = InMemorySection.Results.median(
					ceilings.stream().mapToDouble((rates) -> rates.getOrDefault(algorithm + ".micros", Double.NaN)).toArray());
			cpu.put(algorithm, micros);
			md.append(String.format(Locale.ROOT, "| %s | %.1f | %,.0f | %s | %.0f%% |\n", algorithm, micros,
					InMemorySection.Results.median(ceiling.stream().mapToDouble(Double::doubleValue).toArray()),
					(ours != null) ? String.format(Locale.ROOT, "%,.0f", ours.score()) : "", 100 * ratio));
			if (algorithm.equals("GCRA") || algorithm.equals("TOKEN_BUCKET")) {
				report.target("Redis, " + algorithm + ", " + IN_FLIGHT + " in flight: ≥ 90% of redis-benchmark's rate",
						String.format(Locale.ROOT, "%.0f%%", 100 * ratio), ratio >= 0.9);
				report.target("Redis, " + algorithm + ": Redis CPU per call ≤ 9 µs",
						String.format(Locale.ROOT, "%.1f µs", micros), micros <= 9);
			}
		}
		double gateway = cpu.getOrDefault(RedisContender.GATEWAY, Double.NaN);
		for (String ours : BUCKETS) {
			double micros = cpu.getOrDefault(ours, Double.NaN);
			boolean measured = !Double.isNaN(micros) && !Double.isNaN(gateway);
			report.target("Redis, " + ours + ": Redis CPU per call ≤ Spring Cloud Gateway's script's",
					measured ? String.format(Locale.ROOT, "%.1f µs against %.1f µs", micros, gateway) : "",
					measured ? micros <= gateway : null);
		}
		return md.append('\n').toString();
	}

	private Duration exhaustedTime() {
		return Duration.ofSeconds((this.mode == Suite.Mode.QUICK) ? 3 : 5);
	}

	/** Our store on one exhausted hot key with its local denial and without it, and the two targets of that. */
	private String exhaustedTable(List<ExhaustedHotKey.Round> rounds, Suite.Report report) {
		RateLimitPolicy policy = ExhaustedHotKey.POLICY;
		StringBuilder md = new StringBuilder("### One exhausted hot key, local denials\n\n");
		md.append("One key that its policy, ").append(policy.algorithm()).append(' ').append(policy.limit())
			.append(" per ").append(policy.window().toMinutes()).append(" minutes, denies once its first ")
			.append(policy.limit()).append(" requests are taken, just before: ").append(ExhaustedHotKey.CALLERS)
			.append(" threads ask for it at once through our store on one shared Lettuce connection for ")
			.append(exhaustedTime().toSeconds()).append(" s, after ").append(ExhaustedHotKey.WARMUP.toSeconds())
			.append(" s untimed, every decision a denial. The store runs once with its local denial (`localDenials(true)`, ")
			.append("the default), which denies a request that Redis has denied again without a call until the ")
			.append("retry-after Redis gave, and once without it (`localDenials(false)`), every request a script call. ")
			.append("Redis calls are the growth of `INFO commandstats` `cmdstat_evalsha` and `cmdstat_eval` calls ")
			.append("over the timed seconds, the store's heartbeat (one script a second) included. Which run goes ")
			.append("first alternates between rounds; figures are medians over rounds, and the ratio the median of ")
			.append("in-round ratios.\n\n");
		md.append("| local denials | requests | Redis calls | requests per Redis call | decisions/s | × without local denials |\n")
			.append("|---|--:|--:|--:|--:|--:|\n");
		double ratio = InMemorySection.Results.median(rounds.stream().mapToDouble(ExhaustedHotKey.Round::ratio).toArray());
		double perCall = Double.NaN;
		for (boolean local : new boolean[] { true, false }) {
			List<ExhaustedHotKey.Run> runs = rounds.stream().map((round) -> local ? round.local() : round.redisOnly())
				.toList();
			double requestsPerCall = median(runs, ExhaustedHotKey.Run::requestsPerCall);
			if (local) {
				perCall = requestsPerCall;
			}
			md.append(String.format(Locale.ROOT, "| %s | %,.0f | %,.0f | %s | %,.0f | %s |\n", local ? "on" : "off",
					median(runs, ExhaustedHotKey.Run::requests), median(runs, ExhaustedHotKey.Run::redisCalls),
					Double.isInfinite(requestsPerCall) ? "no call" : String.format(Locale.ROOT, "%,.1f", requestsPerCall),
					median(runs, ExhaustedHotKey.Run::perSecond), local ? String.format(Locale.ROOT, "%.1f", ratio) : ""));
		}
		String scenario = "Redis, one exhausted hot key, " + ExhaustedHotKey.CALLERS + " callers: ";
		report.target(scenario + "≥ 100× fewer Redis calls than requests",
				Double.isInfinite(perCall) ? "no Redis call at all"
						: String.format(Locale.ROOT, "%,.0f requests per Redis call", perCall),
				perCall >= 100);
		report.target(scenario + "≥ 20× the decisions per second of the same run without the local denial",
				String.format(Locale.ROOT, "%.1f×", ratio), ratio >= 20);
		return md.append('\n').toString();
	}

	private static double median(List<ExhaustedHotKey.Run> runs, ToDoubleFunction<ExhaustedHotKey.Run> figure) {
		return InMemorySection.Results.median(runs.stream().mapToDouble(figure).toArray());
	}

	static String script(String algorithm) throws IOException {
		if (algorithm.equals(RedisContender.GATEWAY)) {
			return resource(GatewayLimiter.SCRIPT);
		}
		String name = switch (Algorithm.valueOf(algorithm)) {
			case FIXED_WINDOW -> "fixed-window";
			case SLIDING_LOG -> "sliding-log";
			case SLIDING_WINDOW_COUNTER -> "sliding-window-counter";
			case TOKEN_BUCKET -> "token-bucket";
			case LEAKY_BUCKET -> "leaky-bucket";
			case GCRA -> "gcra";
		};
		return resource("META-INF/ratelimit/lua/" + name + ".lua");
	}

	static String resource(String path) throws IOException {
		try (InputStream in = RedisSection.class.getClassLoader().getResourceAsStream(path)) {
			if (in == null) {
				throw new IOException(path + " is not on the class path");
			}
			return new String(in.readAllBytes(), StandardCharsets.UTF_8);
		}
	}

	/** Fills Redis with one request on each of many keys, per contender, and reads what they take. */
	private String memory(RedisServer redis, Suite.Report report) throws Exception {
		StringBuilder md = new StringBuilder("### Memory per key in Redis\n\n");
		md.append("One request (policy 10 per hour) on each of ").append(String.format(Locale.ROOT, "%,d", MEMORY_KEYS))
			.append(" keys such as `ratelimit:{user:10000000}:idle` (Bucket4j: `user:10000000`), then the growth ")
			.append("of `INFO memory` `used_memory` divided by the number of keys (key, value, dictionary entries ")
			.append("and expiry included), `MEMORY USAGE` of one key, and `INFO keyspace`: keys with an expiry ")
			.append("out of all keys.\n\n");
		md.append("| contender | type | bytes per key (INFO) | MEMORY USAGE | keys with expiry |\n|---|---|--:|--:|--:|\n");
		String[] contenders = (this.mode == Suite.Mode.QUICK) ? new String[] { "GCRA", "TOKEN_BUCKET", "bucket4j" }
				: new String[] { "GCRA", "TOKEN_BUCKET", "FIXED_WINDOW", "SLIDING_WINDOW_COUNTER", "SLIDING_LOG",
						"LEAKY_BUCKET", "bucket4j" };
		String[] keys = Keys.names(MEMORY_KEYS);
		RedisClient client = RedisClient.create(RedisURI.create("127.0.0.1", redis.port));
		boolean allExpire = true;
		double worstString = 0;
		try (StatefulRedisConnection<String, String> connection = client.connect()) {
			for (String contender : contenders) {
				redis.command("FLUSHALL");
				long before = redis.usedMemory();
				String sample = fill(client, connection, contender, keys);
				long after = redis.usedMemory();
				String type = redis.command("TYPE", sample);
				String usage = redis.command("MEMORY", "USAGE", sample);
				String keyspace = redis.info("keyspace", "db0");
				Matcher counts = Pattern.compile("keys=(\\d+),expires=(\\d+)").matcher(keyspace);
				counts.find();
				long stored = Long.parseLong(counts.group(1));
				long expiring = Long.parseLong(counts.group(2));
				double perKey = (after - before) / (double) stored;
				allExpire &= contender.equals("bucket4j") || expiring == stored;
				if (!contender.equals("bucket4j") && type.equals("string")) {
					worstString = Math.max(worstString, perKey);
				}
				md.append(String.format(Locale.ROOT, "| %s | %s | %.0f | %s | %,d of %,d |\n", contender, type, perKey,
						usage, expiring, stored));
			}
		}
		finally {
			client.shutdown();
			redis.command("FLUSHALL");
		}
		report.target("Redis: ≤ 140 bytes per string-state key", String.format(Locale.ROOT, "at most %.0f B", worstString),
				worstString <= 140);
		report.target("Redis: ≤ 170 bytes per hash-state key", "no script keeps a hash (sliding log keeps a list)", null);
		report.target("Redis: no key without expiry", allExpire ? "every key expires" : "some keys never expire", allExpire);
		return md.append('\n').toString();
	}

	private static String fill(RedisClient client, StatefulRedisConnection<String, String> connection, String contender,
			String[] keys) throws Exception {
		RateLimitPolicy tokenBucket = RateLimitPolicy.of("idle", Algorithm.TOKEN_BUCKET, 10, Duration.ofHours(1));
		Filler filler;
		String sample;
		if (contender.equals("bucket4j")) {
			RedisContender.Limiter buckets = RedisContender.bucket4j(client, tokenBucket);
			filler = (key) -> buckets.tryAcquire(key, key.getBytes(StandardCharsets.UTF_8));
			sample = keys[0];
		}
		else {
			RateLimiter limiter = RedisRateLimitStore.builder(new LettuceExecutor(connection.async()))
				.timeout(Duration.ofSeconds(10))
				.onFailure((policies, cause) -> {
					throw new IllegalStateException("Redis did not decide", cause);
				})
				.build()
				.limiter(RateLimitPolicy.of("idle", Algorithm.valueOf(contender), tokenBucket.limit(), tokenBucket.window()));
			filler = limiter::tryAcquire;
			sample = "ratelimit:{" + keys[0] + "}:idle";
		}
		int threads = 16;
		ExecutorService pool = Executors.newFixedThreadPool(threads);
		try {
			List<Future<?>> done = new ArrayList<>();
			for (int t = 0; t < threads; t++) {
				int first = t;
				done.add(pool.submit(() -> {
					for (int i = first; i < keys.length; i += threads) {
						filler.fill(keys[i]);
					}
					return null;
				}));
			}
			for (Future<?> future : done) {
				future.get();
			}
		}
		finally {
			pool.shutdown();
		}
		return sample;
	}

	@FunctionalInterface
	private interface Filler {

		void fill(String key);

	}

}
