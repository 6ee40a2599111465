package dev.ratelimit.sample;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.StringJoiner;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import dev.ratelimit.core.RateLimitStore;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Measures, in real time, what ten simultaneous requests get from each of the sample's shaping endpoints and,
 * side by side, from nginx's {@code limit_req} configured as in the article: rate 2 per second, no burst,
 * {@code burst=5}, {@code burst=5 nodelay} and {@code burst=5 delay=2}.
 * <p>
 * It starts the sample application on a free loopback port, with the given arguments (such as
 * {@code --spring.profiles.active=redis}), and nginx, when {@code nginx} is found on the {@code PATH} or in
 * {@code /usr/sbin}, with a private configuration under a temporary folder. For every mode it prints how many
 * requests passed at once (within a quarter of the 0.5 s interval), when each delayed one was answered,
 * counted from the first answer, and how many were rejected with 429.
 * <p>
 * Run with {@code ./mvnw -B -q -pl sample-app -am package -DskipTests -Pshaping-check}.
 */
public final class ShapingCheck {

	private static final String[] MODES = { "plain", "burst", "nodelay", "delay" };

	/** What follows {@code limit_req zone=<mode>} in each mode's location. */
	private static final String[] NGINX = { "", "burst=5", "burst=5 nodelay", "burst=5 delay=2" };

	private static final long AT_ONCE_NANOS = TimeUnit.MILLISECONDS.toNanos(125);

	private final HttpClient http = HttpClient.newHttpClient();

	private ShapingCheck() {
	}

	/**
	 * Runs the check.
	 * @param args arguments for the sample application
	 * @throws Exception if a server cannot be started or does not answer
	 */
	public static void main(String[] args) throws Exception {
		new ShapingCheck().run(args);
	}

	private void run(String[] args) throws Exception {
		Path nginxCommand = nginx();
		List<String> arguments = new ArrayList<>(List.of("--server.port=0", "--server.address=127.0.0.1",
				"--spring.main.banner-mode=off", "--logging.level.root=WARN"));
		arguments.addAll(List.of(args));
		try (ConfigurableApplicationContext context = SpringApplication.run(SampleApplication.class,
				arguments.toArray(String[]::new)); Nginx nginx = (nginxCommand != null) ? Nginx.start(nginxCommand) : null) {
			String sample = "http://127.0.0.1:" + ((WebServerApplicationContext) context).getWebServer().getPort();
			warmUp(sample);
			System.out.println("Ten simultaneous requests per mode, rate 2 per second (one every 0.5 s).");
			System.out.println("nginx: " + ((nginx != null) ? nginx.version : "not found, skipped"));
			System.out.println("ratelimit: the sample application with "
					+ context.getBean(RateLimitStore.class).getClass().getSimpleName());
			System.out.println();
			System.out.printf(Locale.ROOT, "%-8s %-16s %-10s %7s   %-30s %4s%n", "mode", "limit_req", "server",
					"at once", "then one each after (s)", "429");
			for (int i = 0; i < MODES.length; i++) {
				String config = NGINX[i].isEmpty() ? "(no burst)" : NGINX[i];
				if (nginx != null) {
					print(MODES[i], config, "nginx", measure(nginx.url + MODES[i], 10));
				}
				print(MODES[i], config, "ratelimit", measure(sample + "/demo/shaping/" + MODES[i], 10));
			}
			System.out.println();
			System.out.println("at once: answered within " + TimeUnit.NANOSECONDS.toMillis(AT_ONCE_NANOS)
					+ " ms of the first answer; times: when each other 200 arrived, after the first answer");
		}
	}

	/**
	 * Runs the code paths once, on endpoints the check does not measure, so that none is measured cold, and
	 * opens the ten connections.
	 */
	private void warmUp(String sample) throws Exception {
		measure(sample + "/demo/gcra", 10);
		// one passes at once, the next two are held for one and two seconds
		measure(sample + "/demo/leaky-bucket", 3);
	}

	private Result measure(String url, int count) throws Exception {
		HttpRequest request = HttpRequest.newBuilder(URI.create(url)).build();
		// a collection now rather than in the middle of the ten
		System.gc();
		long start = System.nanoTime();
		List<CompletableFuture<long[]>> answers = new ArrayList<>();
		for (int i = 0; i < count; i++) {
			answers.add(this.http.sendAsync(request, HttpResponse.BodyHandlers.discarding())
				.thenApply((response) -> new long[] { response.statusCode(), System.nanoTime() - start }));
		}
		List<long[]> statusAndTimes = new ArrayList<>();
		for (CompletableFuture<long[]> answer : answers) {
			statusAndTimes.add(answer.get(30, TimeUnit.SECONDS));
		}
		// times count from the first answer, so that a pause of this JVM before it shifts nothing
		long first = statusAndTimes.stream().mapToLong((statusAndTime) -> statusAndTime[1]).min().orElseThrow();
		Result result = new Result();
		for (long[] statusAndTime : statusAndTimes) {
			long after = statusAndTime[1] - first;
			if (statusAndTime[0] == 429) {
				result.rejected++;
			}
			else if (statusAndTime[0] != 200) {
				result.other++;
			}
			else if (after < AT_ONCE_NANOS) {
				result.atOnce++;
			}
			else {
				result.delays.add(after);
			}
		}
		result.delays.sort(null);
		return result;
	}

	private static void print(String mode, String config, String server, Result result) {
		StringJoiner delays = new StringJoiner(" ");
		result.delays.forEach((nanos) -> delays.add(String.format(Locale.ROOT, "%.2f", nanos / 1e9)));
		System.out.printf(Locale.ROOT, "%-8s %-16s %-10s %7d   %-30s %4d%s%n", mode, config, server, result.atOnce,
				(delays.length() > 0) ? delays : "-", result.rejected,
				(result.other > 0) ? "  (" + result.other + " other answers)" : "");
	}

	private static @Nullable Path nginx() {
		Stream<Path> candidates = Stream.concat(
				Stream.of(System.getenv().getOrDefault("PATH", "").split(java.io.File.pathSeparator)).map(Path::of),
				Stream.of(Path.of("/usr/sbin"), Path.of("/usr/local/sbin")));
		return candidates.map((dir) -> dir.resolve("nginx")).filter(Files::isExecutable).findFirst().orElse(null);
	}

	private static final class Result {

		private int atOnce;

		private int rejected;

		private int other;

		private final List<Long> delays = new ArrayList<>();

	}

	/**
	 * An nginx with a private configuration: listening on a free loopback port, with its pid, logs and
	 * temporary files in a temporary folder, serving one small file per mode under its own limit_req zone.
	 */
	private static final class Nginx implements AutoCloseable {

		private final Path home;

		private final Process process;

		private final String url;

		private final String version;

		private Nginx(Path home, Process process, int port, String version) {
			this.home = home;
			this.process = process;
			this.url = "http://127.0.0.1:" + port + "/";
			this.version = version;
		}

		static Nginx start(Path command) throws Exception {
			Path home = Files.createTempDirectory("shaping-check-nginx-");
			// workers may run as another user, who must read the files
			Files.setPosixFilePermissions(home, PosixFilePermissions.fromString("rwxr-xr-x"));
			Path www = Files.createDirectory(home.resolve("www"));
			Files.setPosixFilePermissions(www, PosixFilePermissions.fromString("rwxr-xr-x"));
			StringBuilder zones = new StringBuilder();
			StringBuilder locations = new StringBuilder();
			for (int i = 0; i < MODES.length; i++) {
				Path file = Files.writeString(www.resolve(MODES[i]), MODES[i] + "\n");
				Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-r--r--"));
				zones.append("    limit_req_zone $binary_remote_addr zone=").append(MODES[i]).append(":1m rate=2r/s;\n");
				// limit_req never fires in a location that only returns: serve the file
				locations.append("        location = /")
					.append(MODES[i])
					.append(" { limit_req zone=")
					.append(MODES[i])
					.append(NGINX[i].isEmpty() ? "" : " " + NGINX[i])
					.append("; }\n");
			}
			int port = freePort();
			String config = """
					daemon off;
					worker_processes 1;
					pid %1$s/nginx.pid;
					error_log %1$s/error.log warn;
					events { worker_connections 256; }
					http {
					    access_log off;
					    default_type text/plain;
					    client_body_temp_path %1$s/client_body;
					    proxy_temp_path %1$s/proxy;
					    fastcgi_temp_path %1$s/fastcgi;
					    uwsgi_temp_path %1$s/uwsgi;
					    scgi_temp_path %1$s/scgi;
					    limit_req_status 429;
					%2$s    server {
					        listen 127.0.0.1:%3$d;
					        root %1$s/www;
					%4$s    }
					}
					""".formatted(home, zones, port, locations);
			Path conf = Files.writeString(home.resolve("nginx.conf"), config);
			String version = run(command.toString(), "-v").trim();
			Process process = new ProcessBuilder(command.toString(), "-p", home.toString(), "-e",
					home.resolve("error.log").toString(), "-c", conf.toString())
				.redirectErrorStream(true)
				.redirectOutput(home.resolve("nginx.out").toFile())
				.start();
			Nginx nginx = new Nginx(home, process, port, version.replace("nginx version: ", ""));
			try {
				awaitListening(port, process, home);
			}
			catch (Exception ex) {
				nginx.close();
				throw ex;
			}
			return nginx;
		}

		private static void awaitListening(int port, Process process, Path home) throws Exception {
			long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
			while (true) {
				try {
					// connected: nginx listens
					new Socket(InetAddress.getLoopbackAddress(), port).close();
					return;
				}
				catch (IOException ex) {
					if (!process.isAlive() || System.nanoTime() > deadline) {
						throw new IllegalStateException("nginx did not start: "
								+ Files.readString(home.resolve("nginx.out")) + readIfExists(home.resolve("error.log")));
					}
					Thread.sleep(20);
				}
			}
		}

		private static String readIfExists(Path file) throws IOException {
			return Files.exists(file) ? Files.readString(file) : "";
		}

		private static String run(String... command) throws Exception {
			Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
			String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
			process.waitFor(10, TimeUnit.SECONDS);
			return output;
		}

		private static int freePort() throws IOException {
			try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
				return socket.getLocalPort();
			}
		}

		@Override
		public void close() throws IOException {
			// SIGTERM: nginx's fast shutdown
			this.process.destroy();
			try {
				if (!this.process.waitFor(10, TimeUnit.SECONDS)) {
					this.process.destroyForcibly();
				}
			}
			catch (InterruptedException ex) {
				this.process.destroyForcibly();
				Thread.currentThread().interrupt();
			}
			try (Stream<Path> files = Files.walk(this.home)) {
				for (Path file : files.sorted(Comparator.reverseOrder()).toList()) {
					Files.deleteIfExists(file);
				}
			}
		}

	}

}
