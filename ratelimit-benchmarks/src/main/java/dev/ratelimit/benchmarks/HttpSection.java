package dev.ratelimit.benchmarks;

import java.io.IOException;
import java.net.HttpURLConnection;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The sample application under {@code wrk} on loopback: {@code /demo/gcra}, limited, against its unlimited twin
 * {@code /demo/unlimited}, with the in-memory store and with Redis, once through Lettuce, Spring Boot's default
 * client, and once through Jedis; the WebFlux sample likewise, on Lettuce alone. The limit is raised to 10^8 per second so that nothing is rejected, which every
 * run checks; the store times out only after two seconds and denies on failure, so that a decision made without
 * Redis would show as a rejection.
 * <p>
 * Throughput comes from {@code wrk} with 16 connections; latency from {@code wrk} with one connection, one request
 * at a time, so that the median is the time to serve a request rather than time spent queueing.
 */
final class HttpSection {

	private static final String LIMITED = "/demo/gcra";

	private static final String UNLIMITED = "/demo/unlimited";

	/** The prefix of the stores of the WebFlux sample's runs. */
	private static final String WEBFLUX = "webflux-";

	private static final Pattern RATE = Pattern.compile("Requests/sec:\\s+([0-9.]+)");

	private static final Pattern MEDIAN = Pattern.compile("\\s50%\\s+([0-9.]+)(us|ms|s)");

	private static final Pattern NON_2XX = Pattern.compile("Non-2xx or 3xx responses: (\\d+)");

	private final Suite.Mode mode;

	private final Path out;

	HttpSection(Suite.Mode mode, Path out) {
		this.mode = mode;
		this.out = out;
	}

	void run(Suite.Report report) throws Exception {
		Path jar = sampleJar("sample-app");
		StringBuilder md = new StringBuilder("## HTTP\n\n");
		if (jar == null) {
			report.section(md.append("Not measured: build the sample application first ")
				.append("(`./mvnw -B -q -pl sample-app -am package -DskipTests`, as `run.sh` does).\n")
				.toString());
			return;
		}
		md.append("The sample application (`java -jar sample-app.jar`, Tomcat, Spring Security in front, as shipped) on ")
			.append("127.0.0.1, `").append(LIMITED).append("` (GCRA, keyed by client address, limit raised to 10^8 per ")
			.append("second) against `").append(UNLIMITED).append("`, the same handler without a limit. Each store: ")
			.append("10 s of warmup on each endpoint, then ").append(rounds()).append(" rounds of `wrk -t1 -c16 -d")
			.append(seconds()).append("s` on each endpoint in turn for throughput and `wrk -t1 -c1 -d").append(seconds())
			.append("s --latency` for the median latency. wrk and the application share the machine's two cores. ")
			.append("On Redis the application runs once with Spring Boot's default client, Lettuce, and once with ")
			.append("`--spring.data.redis.client-type=jedis`. Rejections are counted: there were none unless the ")
			.append("table says so.\n\n");
		Path webflux = sampleJar("sample-webflux-app");
		if (webflux != null) {
			md.append("The WebFlux sample (`java -jar sample-webflux-app.jar`, Reactor Netty, Spring Security in front, ")
				.append("the same endpoints and YAML) is measured the same way, in memory and on Redis through Lettuce, ")
				.append("the one client that does not block an event loop.\n\n");
		}
		md.append("| stack | store | unlimited req/s | limited req/s | limited / unlimited | unlimited p50 | limited p50 | added p50 | non-2xx |\n");
		md.append("|---|---|--:|--:|--:|--:|--:|--:|--:|\n");
		Result memory = measure(jar, "memory", List.of());
		md.append(memory.row());
		report.target("HTTP, in memory: the limiter costs ≤ 3% throughput",
				String.format(Locale.ROOT, "%.1f%%", 100 * (1 - memory.throughputRatio())),
				memory.throughputRatio() >= 0.97 && memory.rejected == 0);
		Result webfluxMemory = null;
		if (webflux != null) {
			webfluxMemory = measure(webflux, WEBFLUX + "memory", List.of());
			md.append(webfluxMemory.row());
			report.target("HTTP on WebFlux, in memory: the limiter costs ≤ 3% throughput",
					String.format(Locale.ROOT, "%.1f%%", 100 * (1 - webfluxMemory.throughputRatio())),
					webfluxMemory.throughputRatio() >= 0.97 && webfluxMemory.rejected == 0);
		}
		try (RedisServer redis = RedisServer.start()) {
			List<String> onRedisArguments = List.of("--spring.profiles.active=redis",
					"--spring.data.redis.host=127.0.0.1", "--spring.data.redis.port=" + redis.port,
					"--ratelimit.redis.timeout=2s", "--ratelimit.redis.failure-policy=deny");
			Result onLettuce = measure(jar, "redis-lettuce", onRedisArguments);
			md.append(onLettuce.row());
			List<String> onJedisArguments = new ArrayList<>(onRedisArguments);
			onJedisArguments.add("--spring.data.redis.client-type=jedis");
			Result onJedis = measure(jar, "redis-jedis", onJedisArguments);
			md.append(onJedis.row());
			Result webfluxOnLettuce = (webflux != null)
					? measure(webflux, WEBFLUX + "redis-lettuce", onRedisArguments) : null;
			if (webfluxOnLettuce != null) {
				md.append(webfluxOnLettuce.row());
			}
			double ping = roundTripMicros(redis, "PING");
			String sha = redis.command("SCRIPT", "LOAD", RedisSection.script("GCRA"));
			double script = roundTripMicros(redis, "EVALSHA", sha, "1", "ratelimit:{127.0.0.1}:DemoController.gcra",
					"100000000", "1000000", "100000000", "1", "");
			md.append(String.format(Locale.ROOT, "%nOne Redis round trip, median of `redis-benchmark -c 1 -n 20000`: "
					+ "%.0f µs for `PING`, %.0f µs for the endpoint's own `EVALSHA` (the GCRA script, same key and "
					+ "arguments), which is the one round trip a decision needs.%n", ping, script));
			roundTripTarget(report, "Lettuce", onLettuce, script, ping);
			roundTripTarget(report, "Jedis", onJedis, script, ping);
			if (webfluxOnLettuce != null) {
				roundTripTarget(report, "Lettuce on WebFlux", webfluxOnLettuce, script, ping);
			}
		}
		report.section(md.append('\n').toString());
	}

	private static void roundTripTarget(Suite.Report report, String client, Result onRedis, double script,
			double ping) {
		double added = onRedis.addedMedianMicros();
		report.target("HTTP, on Redis through " + client + ": added median latency ≤ one Redis round trip + 50 µs",
				String.format(Locale.ROOT, "+%.0f µs; the script's round trip is %.0f µs (a `PING`'s %.0f µs)", added,
						script, ping),
				added <= script + 50 && onRedis.rejected == 0);
	}

	/**
	 * Twice as many rounds as the JMH benchmarks, each half as long: the two endpoints take turns every few
	 * seconds, so that a change in the machine's load falls on both alike, and the median of more in-round ratios
	 * is steadier.
	 */
	private int rounds() {
		return 2 * this.mode.rounds;
	}

	private int seconds() {
		return (this.mode == Suite.Mode.QUICK) ? 3 : 5;
	}

	private Result measure(Path jar, String store, List<String> extra) throws Exception {
		int port;
		try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
			port = socket.getLocalPort();
		}
		List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
				"-Xms512m", "-Xmx512m", "-jar", jar.toString(), "--server.port=" + port, "--server.address=127.0.0.1",
				"--ratelimit.policies.[DemoController.gcra].limit=100000000",
				"--ratelimit.policies.[DemoController.gcra].window=1s", "--logging.level.root=WARN"));
		command.addAll(extra);
		Path log = this.out.resolve("sample-app-" + store + ".log");
		Process app = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
		try {
			String base = "http://127.0.0.1:" + port;
			awaitUp(base + UNLIMITED, app, log);
			wrk(16, 10, base + LIMITED, false);
			wrk(16, 10, base + UNLIMITED, false);
			Result result = new Result(store);
			for (int round = 0; round < rounds(); round++) {
				boolean limitedFirst = round % 2 == 0;
				for (boolean limited : new boolean[] { limitedFirst, !limitedFirst }) {
					Wrk run = wrk(16, seconds(), base + (limited ? LIMITED : UNLIMITED), false);
					(limited ? result.limitedRates : result.unlimitedRates).add(run.rate);
					result.rejected += run.non2xx;
				}
				for (boolean limited : new boolean[] { limitedFirst, !limitedFirst }) {
					Wrk run = wrk(1, seconds(), base + (limited ? LIMITED : UNLIMITED), true);
					(limited ? result.limitedMedians : result.unlimitedMedians).add(run.medianMicros);
					result.rejected += run.non2xx;
				}
			}
			System.out.println("http " + store + ": " + result.row().trim());
			return result;
		}
		finally {
			app.destroy();
			if (!app.waitFor(10, TimeUnit.SECONDS)) {
				app.destroyForcibly();
			}
		}
	}

	private static void awaitUp(String url, Process app, Path log) throws Exception {
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
		while (System.nanoTime() < deadline) {
			if (!app.isAlive()) {
				throw new IllegalStateException("The sample application stopped, see " + log);
			}
			try {
				HttpURLConnection connection = (HttpURLConnection) URI.create(url).toURL().openConnection();
				connection.setConnectTimeout(1000);
				if (connection.getResponseCode() == 200) {
					return;
				}
			}
			catch (IOException ex) {
				// not listening yet
			}
			Thread.sleep(250);
		}
		throw new IllegalStateException("The sample application did not answer within 90 s, see " + log);
	}

	private Wrk wrk(int connections, int seconds, String url, boolean latency) throws IOException, InterruptedException {
		List<String> command = new ArrayList<>(List.of("wrk", "-t1", "-c" + connections, "-d" + seconds + "s"));
		if (latency) {
			command.add("--latency");
		}
		command.add(url);
		Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
		String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
		if (process.waitFor() != 0) {
			throw new IllegalStateException("wrk failed: " + output);
		}
		Matcher rate = RATE.matcher(output);
		if (!rate.find()) {
			throw new IllegalStateException("No rate in wrk's output: " + output);
		}
		Wrk run = new Wrk();
		run.rate = Double.parseDouble(rate.group(1));
		Matcher non2xx = NON_2XX.matcher(output);
		run.non2xx = non2xx.find() ? Long.parseLong(non2xx.group(1)) : 0;
		Matcher median = MEDIAN.matcher(output);
		if (median.find()) {
			double value = Double.parseDouble(median.group(1));
			run.medianMicros = switch (median.group(2)) {
				case "us" -> value;
				case "ms" -> value * 1000;
				default -> value * 1_000_000;
			};
		}
		return run;
	}

	/** The median latency of one command from {@code redis-benchmark} with a single connection. */
	static double roundTripMicros(RedisServer redis, String... command) throws IOException, InterruptedException {
		List<String> arguments = new ArrayList<>(List.of("redis-benchmark", "-h", "127.0.0.1", "-p",
				Integer.toString(redis.port), "-c", "1", "-n", "20000", "-q"));
		arguments.addAll(List.of(command));
		Process process = new ProcessBuilder(arguments).redirectErrorStream(true).start();
		String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
		process.waitFor();
		Matcher p50 = Pattern.compile("p50=([0-9.]+) msec").matcher(output);
		double micros = Double.NaN;
		while (p50.find()) {
			micros = Double.parseDouble(p50.group(1)) * 1000;
		}
		return micros;
	}

	private static Path sampleJar(String module) throws IOException {
		Path target = Path.of(module, "target");
		if (!Files.isDirectory(target)) {
			return null;
		}
		try (Stream<Path> files = Files.list(target)) {
			return files.filter((file) -> file.getFileName().toString().matches(module + "-[0-9].*\\.jar"))
				.filter((file) -> !file.getFileName().toString().endsWith("-plain.jar"))
				.findFirst()
				.orElse(null);
		}
	}

	/** One wrk run. */
	private static final class Wrk {

		double rate;

		double medianMicros = Double.NaN;

		long non2xx;

	}

	/** Every run against one store. */
	private static final class Result {

		final String store;

		final List<Double> limitedRates = new ArrayList<>();

		final List<Double> unlimitedRates = new ArrayList<>();

		final List<Double> limitedMedians = new ArrayList<>();

		final List<Double> unlimitedMedians = new ArrayList<>();

		long rejected;

		Result(String store) {
			this.store = store;
		}

		/** The median over rounds of limited / unlimited within each round. */
		double throughputRatio() {
			double[] ratios = new double[this.limitedRates.size()];
			for (int i = 0; i < ratios.length; i++) {
				ratios[i] = this.limitedRates.get(i) / this.unlimitedRates.get(i);
			}
			return InMemorySection.Results.median(ratios);
		}

		double addedMedianMicros() {
			double[] added = new double[this.limitedMedians.size()];
			for (int i = 0; i < added.length; i++) {
				added[i] = this.limitedMedians.get(i) - this.unlimitedMedians.get(i);
			}
			return InMemorySection.Results.median(added);
		}

		/** The row of the report's table; a WebFlux run's store is named {@code webflux-<store>}. */
		String row() {
			boolean webflux = this.store.startsWith(WEBFLUX);
			return String.format(Locale.ROOT, "| %s | %s | %,.0f | %,.0f | %.3f | %.0f µs | %.0f µs | %+.0f µs | %d |%n",
					webflux ? "WebFlux" : "Spring MVC", webflux ? this.store.substring(WEBFLUX.length()) : this.store,
					median(this.unlimitedRates), median(this.limitedRates), throughputRatio(),
					median(this.unlimitedMedians), median(this.limitedMedians), addedMedianMicros(), this.rejected);
		}

		private static double median(List<Double> values) {
			return InMemorySection.Results.median(values.stream().mapToDouble(Double::doubleValue).toArray());
		}

	}

}
