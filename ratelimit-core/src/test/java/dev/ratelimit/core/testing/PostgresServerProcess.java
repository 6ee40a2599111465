package dev.ratelimit.core.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.UserPrincipalLookupService;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import org.jspecify.annotations.Nullable;

/**
 * A throwaway PostgreSQL cluster: {@code initdb} in a temporary folder, then {@code pg_ctl start} on a free
 * loopback port with its socket in that folder, trusting local connections and syncing nothing to disk. The
 * binaries come from the {@code PATH}, else from {@code /usr/lib/postgresql/<version>/bin}. Since {@code initdb}
 * refuses to run as root, a root JVM runs them as the {@code postgres} user. {@link #close()} stops the cluster
 * at once and deletes the folder.
 */
public final class PostgresServerProcess implements AutoCloseable {

	private static final long TIMEOUT_SECONDS = 60;

	private final Path bin;

	private final Path directory;

	private final int port;

	private PostgresServerProcess(Path bin, Path directory, int port) {
		this.bin = bin;
		this.directory = directory;
		this.port = port;
	}

	/**
	 * Returns the folder of {@code initdb} and {@code pg_ctl}, or null when there is none.
	 * @return the folder, or null
	 */
	public static @Nullable Path binaries() {
		String path = System.getenv("PATH");
		List<Path> candidates = new ArrayList<>();
		if (path != null) {
			Stream.of(path.split(java.io.File.pathSeparator)).filter((dir) -> !dir.isEmpty()).map(Path::of)
				.forEach(candidates::add);
		}
		try (Stream<Path> versions = Files.list(Path.of("/usr/lib/postgresql"))) {
			versions.sorted(Comparator.reverseOrder()).map((version) -> version.resolve("bin")).forEach(candidates::add);
		}
		catch (IOException ex) {
			// no packaged PostgreSQL
		}
		return candidates.stream()
			.filter((dir) -> Files.isExecutable(dir.resolve("initdb")) && Files.isExecutable(dir.resolve("pg_ctl")))
			.findFirst()
			.orElse(null);
	}

	/**
	 * Creates and starts a cluster on a free loopback port.
	 * @param bin the folder of the binaries, from {@link #binaries()}
	 * @return the running cluster
	 */
	public static PostgresServerProcess start(Path bin) {
		try {
			Path directory = Files.createTempDirectory("ratelimit-postgres-");
			PostgresServerProcess server = new PostgresServerProcess(bin, directory, RedisServerProcess.freePort());
			try {
				server.launch();
			}
			catch (RuntimeException ex) {
				server.close();
				throw ex;
			}
			return server;
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	private void launch() throws IOException {
		if (isRoot()) {
			UserPrincipalLookupService users = this.directory.getFileSystem().getUserPrincipalLookupService();
			Files.setOwner(this.directory, users.lookupPrincipalByName("postgres"));
		}
		Path data = this.directory.resolve("data");
		run(List.of(this.bin.resolve("initdb").toString(), "-D", data.toString(), "-A", "trust", "-U", "postgres",
				"-E", "UTF8", "--no-sync"));
		startAgain();
	}

	/**
	 * Starts the cluster that {@link #stop()} stopped, on the same port and data, and waits until it accepts
	 * connections.
	 */
	public void startAgain() {
		Path data = this.directory.resolve("data");
		String options = "-p " + this.port + " -k " + this.directory + " -c listen_addresses=127.0.0.1 -c fsync=off"
				+ " -c synchronous_commit=off -c full_page_writes=off -c max_connections=200";
		run(List.of(this.bin.resolve("pg_ctl").toString(), "-D", data.toString(), "-o", options, "-l",
				this.directory.resolve("postgres.log").toString(), "-w", "start"));
	}

	/** Runs a command, as the {@code postgres} user when this JVM runs as root, and waits for it to succeed. */
	private void run(List<String> command) {
		List<String> line = command;
		if (isRoot()) {
			StringBuilder shell = new StringBuilder();
			for (String word : command) {
				shell.append('\'').append(word.replace("'", "'\\''")).append("' ");
			}
			line = List.of("su", "postgres", "-s", "/bin/sh", "-c", shell.toString());
		}
		try {
			Path output = this.directory.resolveSibling(this.directory.getFileName() + ".out");
			Process process = new ProcessBuilder(line).redirectErrorStream(true)
				.redirectOutput(output.toFile())
				.start();
			boolean done = process.waitFor(TIMEOUT_SECONDS, TimeUnit.SECONDS);
			String printed = Files.readString(output);
			Files.deleteIfExists(output);
			if (!done || process.exitValue() != 0) {
				process.destroyForcibly();
				throw new IllegalStateException(String.join(" ", command) + " failed: " + printed);
			}
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	private static boolean isRoot() {
		return "root".equals(System.getProperty("user.name"));
	}

	/**
	 * Returns the JDBC URL of the cluster's {@code postgres} database, as the {@code postgres} user.
	 * @return the URL
	 */
	public String jdbcUrl() {
		return "jdbc:postgresql://127.0.0.1:" + this.port + "/postgres?user=postgres";
	}

	/**
	 * Returns the cluster's port on 127.0.0.1.
	 * @return the port
	 */
	public int port() {
		return this.port;
	}

	/**
	 * Stops the cluster, ending every connection to it, after writing what it committed, which a stop at once
	 * would lose with {@code synchronous_commit=off}; {@link #startAgain()} starts it again.
	 */
	public void stop() {
		run(List.of(this.bin.resolve("pg_ctl").toString(), "-D", this.directory.resolve("data").toString(), "-m",
				"fast", "-w", "stop"));
	}

	/**
	 * Freezes every process of the cluster ({@code SIGSTOP}), as a host that stops answering does: connections
	 * and statements wait without an error until {@link #resume()}.
	 */
	public void pause() {
		signal("-STOP");
	}

	/**
	 * Lets the processes that {@link #pause()} froze run again ({@code SIGCONT}).
	 */
	public void resume() {
		signal("-CONT");
	}

	/**
	 * Sends {@code signal} to the postmaster and to each of its processes, again to those that it forked
	 * meanwhile, until no new one appears.
	 */
	private void signal(String signal) {
		try {
			long postmaster = Long.parseLong(
					Files.readAllLines(this.directory.resolve("data").resolve("postmaster.pid")).get(0).trim());
			Set<Long> signalled = new HashSet<>();
			List<Long> pending = List.of(postmaster);
			while (!pending.isEmpty()) {
				List<String> command = new ArrayList<>(List.of("kill", signal));
				pending.forEach((pid) -> command.add(Long.toString(pid)));
				Process kill = new ProcessBuilder(command).redirectErrorStream(true).start();
				if (!kill.waitFor(TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
					kill.destroyForcibly();
					throw new IllegalStateException(String.join(" ", command) + " did not end");
				}
				signalled.addAll(pending);
				pending = ProcessHandle.of(postmaster)
					.map((process) -> process.descendants().map(ProcessHandle::pid).toList())
					.orElse(List.of())
					.stream()
					.filter((pid) -> !signalled.contains(pid))
					.toList();
			}
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	@Override
	public void close() {
		Path data = this.directory.resolve("data");
		if (Files.exists(data.resolve("postmaster.pid"))) {
			try {
				run(List.of(this.bin.resolve("pg_ctl").toString(), "-D", data.toString(), "-m", "immediate", "-w",
						"stop"));
			}
			catch (RuntimeException ex) {
				// stopping on the way out: the folder goes all the same
			}
		}
		try (Stream<Path> files = Files.walk(this.directory)) {
			files.sorted(Comparator.reverseOrder()).forEach((file) -> file.toFile().delete());
		}
		catch (IOException ex) {
			// a temporary folder left behind
		}
	}

}
