package dev.ratelimit.benchmarks;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A throwaway {@code redis-server} from the PATH on a free loopback port, with persistence off and its files in
 * a temporary folder, and a minimal RESP client for the few administrative commands the suite sends.
 */
final class RedisServer implements AutoCloseable {

	private final Process process;

	private final Path dir;

	final int port;

	private RedisServer(Process process, Path dir, int port) {
		this.process = process;
		this.dir = dir;
		this.port = port;
	}

	static RedisServer start() throws IOException, InterruptedException {
		int port;
		try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
			port = socket.getLocalPort();
		}
		Path dir = Files.createTempDirectory("bench-redis");
		Process process = new ProcessBuilder("redis-server", "--port", Integer.toString(port), "--bind", "127.0.0.1",
				"--save", "", "--appendonly", "no", "--dir", dir.toString(), "--daemonize", "no")
			.redirectErrorStream(true)
			.redirectOutput(dir.resolve("redis.log").toFile())
			.start();
		RedisServer server = new RedisServer(process, dir, port);
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
		while (true) {
			try {
				if ("PONG".equals(server.command("PING"))) {
					return server;
				}
			}
			catch (IOException ex) {
				if (System.nanoTime() > deadline || !process.isAlive()) {
					server.close();
					throw new IOException("redis-server did not start on 127.0.0.1:" + port + ", see "
							+ dir.resolve("redis.log"), ex);
				}
				Thread.sleep(20);
			}
		}
	}

	/** Sends one command and returns its reply: a simple or bulk string, an integer as text, or lines for an array. */
	String command(String... arguments) throws IOException {
		try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), this.port)) {
			socket.setSoTimeout(30_000);
			OutputStream out = socket.getOutputStream();
			StringBuilder request = new StringBuilder("*").append(arguments.length).append("\r\n");
			for (String argument : arguments) {
				byte[] bytes = argument.getBytes(StandardCharsets.UTF_8);
				request.append('$').append(bytes.length).append("\r\n").append(argument).append("\r\n");
			}
			out.write(request.toString().getBytes(StandardCharsets.UTF_8));
			out.flush();
			return read(socket.getInputStream());
		}
	}

	private static String read(InputStream in) throws IOException {
		String line = line(in);
		switch (line.charAt(0)) {
			case '+', ':' -> {
				return line.substring(1);
			}
			case '-' -> throw new IOException("Redis answered " + line.substring(1));
			case '$' -> {
				int length = Integer.parseInt(line.substring(1));
				if (length < 0) {
					return null;
				}
				byte[] bytes = in.readNBytes(length + 2);
				return new String(bytes, 0, length, StandardCharsets.UTF_8);
			}
			case '*' -> {
				int count = Integer.parseInt(line.substring(1));
				List<String> items = new ArrayList<>();
				for (int i = 0; i < count; i++) {
					items.add(read(in));
				}
				return String.join("\n", items);
			}
			default -> throw new IOException("Unexpected reply " + line);
		}
	}

	private static String line(InputStream in) throws IOException {
		StringBuilder line = new StringBuilder();
		int c;
		while ((c = in.read()) != '\r') {
			if (c < 0) {
				throw new IOException("Connection closed");
			}
			line.append((char) c);
		}
		in.read();
		return line.toString();
	}

	/** Reads one field of {@code INFO}, such as {@code used_memory}. */
	String info(String section, String field) throws IOException {
		for (String line : command("INFO", section).split("\r\n")) {
			if (line.startsWith(field + ":")) {
				return line.substring(field.length() + 1).trim();
			}
		}
		throw new IOException("INFO " + section + " has no " + field);
	}

	/**
	 * Reads one figure of a command's line of {@code INFO commandstats}, such as {@code usec_per_call} of
	 * {@code evalsha}: {@code NaN} when Redis has not run the command since its statistics were last reset.
	 */
	double commandStat(String name, String field) throws IOException {
		return commandStat(command("INFO", "commandstats"), name, field);
	}

	/** How many scripts Redis has run since its statistics were last reset: its {@code EVALSHA} and {@code EVAL} calls. */
	long scriptCalls() throws IOException {
		String stats = command("INFO", "commandstats");
		long calls = 0;
		for (String name : new String[] { "evalsha", "eval" }) {
			double count = commandStat(stats, name, "calls");
			calls += Double.isNaN(count) ? 0 : (long) count;
		}
		return calls;
	}

	private static double commandStat(String stats, String name, String field) {
		Matcher matcher = Pattern.compile("[:,]" + Pattern.quote(field) + "=([0-9.]+)")
			.matcher(stats.lines().filter((line) -> line.startsWith("cmdstat_" + name + ":")).findFirst().orElse(""));
		return matcher.find() ? Double.parseDouble(matcher.group(1)) : Double.NaN;
	}

	long usedMemory() throws IOException {
		return Long.parseLong(info("memory", "used_memory"));
	}

	@Override
	public void close() {
		this.process.destroy();
		try {
			if (!this.process.waitFor(5, TimeUnit.SECONDS)) {
				this.process.destroyForcibly();
			}
			try (var files = Files.walk(this.dir)) {
				files.sorted(java.util.Comparator.reverseOrder()).forEach((file) -> file.toFile().delete());
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		catch (IOException ex) {
			// a leftover temporary folder is harmless
		}
	}

}
