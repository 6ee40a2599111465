package dev.ratelimit.core.testing;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * A real Redis Cluster of three masters, without replicas or with one each, every node a
 * {@link RedisServerProcess} on a loopback port, joined with {@code redis-cli --cluster create}.
 * {@link #close()} stops every node and deletes their folders.
 */
public final class LocalRedisCluster implements AutoCloseable {

	private static final long READY_TIMEOUT_MILLIS = 30_000;

	private final List<RedisServerProcess> nodes;

	private final int replicas;

	private LocalRedisCluster(List<RedisServerProcess> nodes, int replicas) {
		this.nodes = nodes;
		this.replicas = replicas;
	}

	/**
	 * Whether both {@code redis-server} and {@code redis-cli} can be started from the {@code PATH}.
	 * @return whether a cluster can be started
	 */
	public static boolean isAvailable() {
		return RedisServerProcess.isAvailable() && RedisServerProcess.onPath("redis-cli");
	}

	/**
	 * Starts three nodes, joins them into a cluster and waits until every node reports it ready.
	 * @return the running cluster
	 */
	public static LocalRedisCluster start() {
		return start(0, Duration.ofSeconds(5));
	}

	/**
	 * Starts three masters with {@code replicas} replicas each, joins them into a cluster and waits until every
	 * node reports it ready.
	 * @param replicas replicas per master, 0 or 1
	 * @param nodeTimeout after how long without an answer the other nodes hold a node failed, and a replica
	 * takes over its master's slots
	 * @return the running cluster
	 */
	public static LocalRedisCluster start(int replicas, Duration nodeTimeout) {
		List<RedisServerProcess> nodes = new ArrayList<>();
		try {
			for (int i = 0; i < 3 * (1 + replicas); i++) {
				// a replica takes over however long ago it last heard from its master: these are fresh; and the
				// slots of a failing primary fail alone
				nodes.add(RedisServerProcess.start("--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
						"--cluster-node-timeout", Long.toString(nodeTimeout.toMillis()),
						"--cluster-replica-validity-factor", "0", "--cluster-require-full-coverage", "no"));
			}
			LocalRedisCluster cluster = new LocalRedisCluster(List.copyOf(nodes), replicas);
			cluster.create();
			cluster.awaitReady();
			return cluster;
		}
		catch (RuntimeException ex) {
			nodes.forEach(RedisServerProcess::close);
			throw ex;
		}
	}

	/**
	 * Returns the URI of every node.
	 * @return the nodes' URIs
	 */
	public List<String> uris() {
		return this.nodes.stream().map(RedisServerProcess::uri).toList();
	}

	/**
	 * Returns the nodes, for sending them commands.
	 * @return the nodes
	 */
	public List<RedisServerProcess> nodes() {
		return this.nodes;
	}

	private void create() {
		List<String> command = new ArrayList<>(List.of("redis-cli", "--cluster", "create"));
		this.nodes.forEach((node) -> command.add("127.0.0.1:" + node.port()));
		command.addAll(List.of("--cluster-replicas", Integer.toString(this.replicas), "--cluster-yes"));
		try {
			Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
			String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
			if (!process.waitFor(READY_TIMEOUT_MILLIS, TimeUnit.MILLISECONDS) || process.exitValue() != 0) {
				throw new IllegalStateException("redis-cli --cluster create failed:\n" + output);
			}
		}
		catch (IOException ex) {
			throw new IllegalStateException("Cannot run redis-cli", ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("Interrupted while creating the cluster", ex);
		}
	}

	/**
	 * The master that serves the slot of every key whose hash tag is {@code hashTag}: the one node that accepts a
	 * write of such a key, the others answering {@code MOVED}.
	 * @param hashTag the hash tag, without its braces
	 * @return the master, if one serves the slot now
	 */
	public Optional<RedisServerProcess> master(String hashTag) {
		String probe = "{" + hashTag + "}:probe";
		return this.nodes.stream().filter(RedisServerProcess::isRunning)
			.filter((node) -> node.command("SET", probe, "1").equals("+OK"))
			.findFirst();
	}

	private void awaitReady() {
		long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(READY_TIMEOUT_MILLIS);
		for (RedisServerProcess node : this.nodes) {
			while (!clusterStateOk(node)) {
				if (System.nanoTime() - deadline > 0) {
					throw new IllegalStateException("Cluster not ready after " + READY_TIMEOUT_MILLIS + " ms");
				}
				try {
					Thread.sleep(50);
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
					throw new IllegalStateException("Interrupted while waiting for the cluster", ex);
				}
			}
		}
	}

	private static boolean clusterStateOk(RedisServerProcess node) {
		try {
			Process process = new ProcessBuilder("redis-cli", "-p", Integer.toString(node.port()), "cluster", "info")
				.redirectErrorStream(true)
				.start();
			String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
			process.waitFor(5, TimeUnit.SECONDS);
			return output.contains("cluster_state:ok");
		}
		catch (IOException ex) {
			return false;
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return false;
		}
	}

	@Override
	public void close() {
		this.nodes.forEach(RedisServerProcess::close);
	}

}
