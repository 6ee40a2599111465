package dev.ratelimit.benchmarks;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.UnknownHostException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.UserPrincipal;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import org.jspecify.annotations.Nullable;

/**
 * The PostgreSQL the benchmarks run against: the one at {@code POSTGRES_URL} (a JDBC URL) when it is set, else a
 * throwaway cluster made by {@code initdb} in a temporary folder and started by {@code pg_ctl} on a free loopback
 * port. The cluster runs with durability off ({@code fsync}, {@code synchronous_commit} and
 * {@code full_page_writes}), as the Redis benchmarks run Redis without persistence: a commit waits for no disk,
 * so the figures are the locking, the round trips and the SQL of each contender. {@code initdb} refuses to run as
 * root, so a root JVM runs the binaries as the {@code postgres} user. Only loopback addresses are ever used.
 */
final class PostgresServer implements AutoCloseable {

	private static final long TIMEOUT_SECONDS = 60;

	private final String url;

	private final @Nullable Path bin;

	private final @Nullable Path dir;

	private PostgresServer(String url, @Nullable Path bin, @Nullable Path dir) {
		this.url = url;
		this.bin = bin;
		this.dir = dir;
	}

	/** Uses {@code POSTGRES_URL}, else starts a cluster of its own. */
	static PostgresServer start() throws IOException, InterruptedException {
		String given = System.getenv("POSTGRES_URL");
		if (given != null && !given.isBlank()) {
			return new PostgresServer(checkLoopback(given), null, null);
		}
		Path bin = binaries().orElseThrow(() -> new IOException(
				"POSTGRES_URL is not set and there is no initdb and pg_ctl on the PATH or in /usr/lib/postgresql"));
		int port;
		try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
			port = socket.getLocalPort();
		}
		Path dir = Files.createTempDirectory("bench-postgres");
		PostgresServer server = new PostgresServer("jdbc:postgresql://127.0.0.1:" + port + "/postgres?user=postgres",
				bin, dir);
		try {
			if (isRoot()) {
				UserPrincipal postgres = dir.getFileSystem().getUserPrincipalLookupService()
					.lookupPrincipalByName("postgres");
				Files.setOwner(dir, postgres);
			}
			server.pg("initdb", "-D", dir.resolve("data").toString(), "-A", "trust", "-U", "postgres", "-E", "UTF8",
					"--no-sync");
			server.pg("pg_ctl", "-D", dir.resolve("data").toString(), "-l", dir.resolve("postgres.log").toString(),
					"-o", "-p " + port + " -k " + dir + " -c listen_addresses=127.0.0.1 -c fsync=off"
							+ " -c synchronous_commit=off -c full_page_writes=off",
					"-w", "start");
			return server;
		}
		catch (IOException | InterruptedException | RuntimeException ex) {
			server.close();
			throw ex;
		}
	}

	/** Whether {@link #start()} can give a PostgreSQL on this machine. */
	static boolean available() {
		String given = System.getenv("POSTGRES_URL");
		return (given != null && !given.isBlank()) || binaries().isPresent();
	}

	/** The folder of {@code initdb} and {@code pg_ctl}: the PATH first, then the newest packaged PostgreSQL. */
	private static Optional<Path> binaries() {
		List<Path> candidates = new ArrayList<>();
		String path = System.getenv("PATH");
		if (path != null) {
			for (String entry : path.split(java.io.File.pathSeparator)) {
				if (!entry.isEmpty()) {
					candidates.add(Path.of(entry));
				}
			}
		}
		try (Stream<Path> versions = Files.list(Path.of("/usr/lib/postgresql"))) {
			versions.sorted(Comparator.reverseOrder()).forEach((version) -> candidates.add(version.resolve("bin")));
		}
		catch (IOException ex) {
			// no packaged PostgreSQL: the PATH alone
		}
		return candidates.stream()
			.filter((dir) -> Files.isExecutable(dir.resolve("initdb")) && Files.isExecutable(dir.resolve("pg_ctl")))
			.findFirst();
	}

	private static String checkLoopback(String url) throws UnknownHostException {
		String host = URI.create(url.substring("jdbc:".length())).getHost();
		for (InetAddress address : InetAddress.getAllByName(host)) {
			if (!address.isLoopbackAddress()) {
				throw new IllegalArgumentException("POSTGRES_URL points at " + host
						+ ", which is not a loopback address: the benchmarks only use a PostgreSQL on this machine");
			}
		}
		return url;
	}

	private static boolean isRoot() {
		return "root".equals(System.getProperty("user.name"));
	}

	/** Runs one of the binaries, as the {@code postgres} user when this JVM is root, and waits for it to succeed. */
	private void pg(String program, String... arguments) throws IOException, InterruptedException {
		assert this.bin != null && this.dir != null;
		List<String> command = new ArrayList<>();
		command.add(this.bin.resolve(program).toString());
		command.addAll(List.of(arguments));
		if (isRoot()) {
			StringBuilder quoted = new StringBuilder();
			command.forEach((word) -> quoted.append('\'').append(word.replace("'", "'\\''")).append("' "));
			command = List.of("su", "postgres", "-s", "/bin/sh", "-c", quoted.toString());
		}
		Path output = Files.createTempFile("bench-postgres", ".out");
		try {
			Process process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(output.toFile())
				.start();
			if (!process.waitFor(TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
				process.destroyForcibly();
				throw new IOException(program + " did not finish within " + TIMEOUT_SECONDS + " s");
			}
			if (process.exitValue() != 0) {
				throw new IOException(program + " failed: " + Files.readString(output));
			}
		}
		finally {
			Files.deleteIfExists(output);
		}
	}

	/** The JDBC URL of the database, with its user. */
	String url() {
		return this.url;
	}

	/** Stops a cluster of its own at once and deletes its folder; leaves one given by {@code POSTGRES_URL} alone. */
	@Override
	public void close() {
		if (this.dir == null) {
			return;
		}
		try {
			if (Files.exists(this.dir.resolve("data").resolve("postmaster.pid"))) {
				pg("pg_ctl", "-D", this.dir.resolve("data").toString(), "-m", "immediate", "-w", "stop");
			}
		}
		catch (IOException ex) {
			// stopping on the way out: the folder goes all the same
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		try (Stream<Path> files = Files.walk(this.dir)) {
			files.sorted(Comparator.reverseOrder()).forEach((file) -> file.toFile().delete());
		}
		catch (IOException ex) {
			// a leftover temporary folder is harmless
		}
	}

}
