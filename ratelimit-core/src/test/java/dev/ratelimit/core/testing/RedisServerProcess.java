package dev.ratelimit.core.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import org.jspecify.annotations.Nullable;

/**
 * A {@code redis-server} started from the {@code PATH} on a free loopback port, persisting nothing, with its
 * working directory in a temporary folder. Fault tests can stop it and start it again on the same port,
 * pause its process, hold its writes, change its settings or make it a replica; {@link #close()} stops it and
 * deletes the folder.
 */
public final class RedisServerProcess implements AutoCloseable {

	private static final long START_TIMEOUT_MILLIS = 10_000;

	private final int port;

	private final Path directory;

	private final List<String> extraArguments;

	private final @Nullable Path configFile;

	private @Nullable Process process;

	private boolean paused;

	private RedisServerProcess(int port, Path directory, List<String> extraArguments, @Nullable Path configFile) {
		this.port = port;
		this.directory = directory;
		this.extraArguments = extraArguments;
		this.configFile = configFile;
	}

	/**
	 * Whether {@code redis-server} can be started from the {@code PATH}.
	 * @return whether a server binary is available
	 */
	public static boolean isAvailable() {
		return onPath("redis-server");
	}

	static boolean onPath(String command) {
		String path = System.getenv("PATH");
		return path != null && Stream.of(path.split(java.io.File.pathSeparator))
			.anyMatch((dir) -> !dir.isEmpty() && Files.isExecutable(Path.of(dir, command)));
	}

	/**
	 * Starts a server on a free loopback port.
	 * @param extraArguments further {@code redis-server} arguments, such as {@code --cluster-enabled yes}
	 * @return the running server
	 */
	public static RedisServerProcess start(String... extraArguments) {
		return start(freePort(), extraArguments);
	}

	static RedisServerProcess start(int port, String... extraArguments) {
		try {
			Path directory = Files.createTempDirectory("ratelimit-redis-" + port + "-");
			RedisServerProcess server = new RedisServerProcess(port, directory, List.of(extraArguments), null);
			server.launch();
			return server;
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	/**
	 * Starts a Sentinel, which needs a configuration file it can rewrite, monitoring one primary on loopback
	 * with a quorum of one, which it holds down after {@code downAfter} without an answer.
	 */
	static RedisServerProcess startSentinel(String primaryName, int primaryPort, Duration downAfter) {
		int port = freePort();
		try {
			Path directory = Files.createTempDirectory("ratelimit-sentinel-" + port + "-");
			String configuration = "sentinel monitor " + primaryName + " 127.0.0.1 " + primaryPort + " 1\n"
					+ "sentinel down-after-milliseconds " + primaryName + " " + downAfter.toMillis() + "\n"
					+ "sentinel failover-timeout " + primaryName + " " + 10 * downAfter.toMillis() + "\n";
			Path configFile = Files.writeString(directory.resolve("sentinel.conf"), configuration);
			RedisServerProcess sentinel = new RedisServerProcess(port, directory, List.of("--sentinel"), configFile);
			sentinel.launch();
			return sentinel;
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	/**
	 * Returns the server's port on 127.0.0.1.
	 * @return the port
	 */
	public int port() {
		return this.port;
	}

	/**
	 * Returns the URI to connect to.
	 * @return {@code redis://127.0.0.1:<port>}
	 */
	public String uri() {
		return "redis://127.0.0.1:" + this.port;
	}

	/**
	 * Whether the server process runs and is not paused.
	 * @return whether it runs
	 */
	public synchronized boolean isRunning() {
		return this.process != null && this.process.isAlive() && !this.paused;
	}

	/**
	 * Starts the server again on its port after {@link #stop()}, empty; does nothing while it runs.
	 */
	public synchronized void restart() {
		if (this.process == null || !this.process.isAlive()) {
			launch();
		}
	}

	private void launch() {
		List<String> command = new ArrayList<>(List.of("redis-server"));
		if (this.configFile != null) {
			command.add(this.configFile.toString());
		}
		command.addAll(List.of("--port", Integer.toString(this.port), "--bind",
				"127.0.0.1", "--save", "", "--appendonly", "no", "--dir", this.directory.toString(), "--logfile",
				"redis.log", "--daemonize", "no"));
		command.addAll(this.extraArguments);
		try {
			this.process = new ProcessBuilder(command).directory(this.directory.toFile())
				.redirectErrorStream(true)
				.redirectOutput(this.directory.resolve("stdout.log").toFile())
				.start();
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Cannot start redis-server", ex);
		}
		awaitPong();
	}

	/**
	 * Stops the server process with {@code SIGSTOP}, as a hung server: connections stay open and commands wait,
	 * unanswered, until {@link #resume()}.
	 */
	public synchronized void pause() {
		signal("STOP");
		this.paused = true;
		awaitState('T');
	}

	/**
	 * Lets a {@link #pause() paused} server run again with {@code SIGCONT}; it then answers what waited.
	 */
	public synchronized void resume() {
		if (this.paused) {
			signal("CONT");
			this.paused = false;
		}
	}

	private void signal(String signal) {
		Process process = this.process;
		if (process == null || !process.isAlive()) {
			throw new IllegalStateException("redis-server on port " + this.port + " is not running");
		}
		try {
			Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(process.pid()))
				.redirectErrorStream(true)
				.start();
			String output = new String(kill.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
			if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
				throw new IllegalStateException("kill -" + signal + " of redis-server failed: " + output);
			}
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Cannot run kill", ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("Interrupted while signalling redis-server", ex);
		}
	}

	/** Waits until Linux reports the process in the given state; elsewhere, trusts the signal. */
	private void awaitState(char state) {
		Path stat = Path.of("/proc", Long.toString(Objects.requireNonNull(this.process).pid()), "stat");
		if (!Files.isReadable(stat)) {
			return;
		}
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
		try {
			while (true) {
				String content = Files.readString(stat);
				// the state follows the command name, which is in parentheses
				if (content.charAt(content.lastIndexOf(')') + 2) == state) {
					return;
				}
				if (System.nanoTime() - deadline > 0) {
					throw new IllegalStateException("redis-server on port " + this.port + " did not reach state "
							+ state + ": " + content);
				}
				Thread.sleep(1);
			}
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("Interrupted while waiting for redis-server", ex);
		}
	}

	/**
	 * Makes the server hold every command that may write, from every client, for a while ({@code CLIENT PAUSE
	 * millis WRITE}); reads are answered meanwhile.
	 * @param millis how long to hold writes
	 */
	public void clientPause(long millis) {
		expectOk("CLIENT", "PAUSE", Long.toString(millis), "WRITE");
	}

	/**
	 * Changes a setting of the running server, such as {@code maxmemory 1} with {@code maxmemory-policy
	 * noeviction}, after which every write answers {@code OOM}.
	 * @param parameter the setting
	 * @param value its new value
	 */
	public void configSet(String parameter, String value) {
		expectOk("CONFIG", "SET", parameter, value);
	}

	/**
	 * Makes the server a replica of another: from then on every write answers {@code READONLY}, and once the
	 * replica has synchronised it holds the primary's data instead of its own.
	 * @param primary the server to replicate
	 */
	public void replicaOf(RedisServerProcess primary) {
		expectOk("REPLICAOF", "127.0.0.1", Integer.toString(primary.port()));
	}

	/**
	 * Makes a {@link #replicaOf replica} a primary again, which accepts writes.
	 */
	public void promote() {
		expectOk("REPLICAOF", "NO", "ONE");
	}

	private void expectOk(String... arguments) {
		String reply = command(arguments);
		if (!reply.startsWith("+OK")) {
			throw new IllegalStateException(
					"Redis on port " + this.port + " refused " + String.join(" ", arguments) + ": " + reply);
		}
	}

	/**
	 * Stops the server and waits until it has exited; its data is gone. A paused server is resumed first, so
	 * that it can exit.
	 */
	public synchronized void stop() {
		Process process = this.process;
		if (process == null) {
			return;
		}
		resume();
		process.destroy();
		try {
			if (!process.waitFor(10, TimeUnit.SECONDS)) {
				process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			process.destroyForcibly();
		}
		this.process = null;
	}

	/**
	 * Kills the server with {@code SIGKILL}, as a crash would, and waits until it has exited: it closes no
	 * connection gracefully and its data is gone.
	 */
	public synchronized void kill() {
		Process process = this.process;
		if (process == null) {
			return;
		}
		try {
			process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		this.process = null;
		this.paused = false;
	}

	/**
	 * Sends one command and returns Redis' first reply line, such as {@code +OK}.
	 * @param arguments the command and its arguments
	 * @return the first line of the reply
	 */
	public String command(String... arguments) {
		return lines(1, arguments).get(0);
	}

	/**
	 * Sends one command whose reply is a bulk string, such as {@code CLUSTER MYID}, and returns the string.
	 * @param arguments the command and its arguments
	 * @return the string, without its length line
	 */
	public String bulk(String... arguments) {
		List<String> lines = lines(2, arguments);
		if (!lines.get(0).startsWith("$")) {
			throw new IllegalStateException(arguments[0] + " answered " + lines.get(0));
		}
		return lines.get(1);
	}

	/**
	 * Sends one command and returns the first {@code count} lines of Redis' reply, as the protocol writes them:
	 * for an array of two strings, its length, then each string's length and the string.
	 * @param count how many lines to read
	 * @param arguments the command and its arguments
	 * @return the lines
	 */
	public List<String> lines(int count, String... arguments) {
		try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), this.port)) {
			socket.setSoTimeout(5000);
			StringBuilder request = new StringBuilder("*").append(arguments.length).append("\r\n");
			for (String argument : arguments) {
				request.append('$')
					.append(argument.getBytes(StandardCharsets.UTF_8).length)
					.append("\r\n")
					.append(argument)
					.append("\r\n");
			}
			OutputStream out = socket.getOutputStream();
			out.write(request.toString().getBytes(StandardCharsets.UTF_8));
			out.flush();
			InputStream in = socket.getInputStream();
			List<String> lines = new ArrayList<>(count);
			lines.add(line(in));
			while (lines.size() < count) {
				// the \n that ended the line before
				in.read();
				lines.add(line(in));
			}
			return lines;
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Redis on port " + this.port + " did not answer " + arguments[0], ex);
		}
	}

	/** One reply line, up to its {@code \r}. */
	private static String line(InputStream in) throws IOException {
		StringBuilder line = new StringBuilder();
		for (int c = in.read(); c != -1 && c != '\r'; c = in.read()) {
			line.append((char) c);
		}
		return line.toString();
	}

	private void awaitPong() {
		long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(START_TIMEOUT_MILLIS);
		while (true) {
			Process process = this.process;
			if (process == null || !process.isAlive()) {
				throw new IllegalStateException("redis-server exited at once: see " + this.directory);
			}
			try {
				if ("+PONG".equals(command("PING"))) {
					return;
				}
			}
			catch (UncheckedIOException ex) {
				// not listening yet
			}
			if (System.nanoTime() - deadline > 0) {
				throw new IllegalStateException("redis-server did not answer on port " + this.port + " in "
						+ START_TIMEOUT_MILLIS + " ms: see " + this.directory);
			}
			try {
				Thread.sleep(10);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new IllegalStateException("Interrupted while starting redis-server", ex);
			}
		}
	}

	@Override
	public void close() {
		stop();
		deleteRecursively(this.directory);
	}

	static void deleteRecursively(Path directory) {
		if (!Files.exists(directory)) {
			return;
		}
		try (Stream<Path> paths = Files.walk(directory)) {
			for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
				Files.deleteIfExists(path);
			}
		}
		catch (IOException ex) {
			// a temporary folder left behind is not worth failing a test run for
		}
	}

	/** A port that is free on the loopback address now, and so is its cluster bus port (port + 10000). */
	static int freePort() {
		for (int attempt = 0; attempt < 100; attempt++) {
			int port;
			try (ServerSocket socket = new ServerSocket()) {
				socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
				port = socket.getLocalPort();
			}
			catch (IOException ex) {
				throw new UncheckedIOException(ex);
			}
			if (port + 10000 <= 65535 && isFree(port + 10000)) {
				return port;
			}
		}
		throw new IllegalStateException("No free loopback port with a free cluster bus port");
	}

	private static boolean isFree(int port) {
		try (ServerSocket socket = new ServerSocket()) {
			socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
			return true;
		}
		catch (IOException ex) {
			return false;
		}
	}

}
