package dev.ratelimit.core.testing;

import java.time.Duration;

import org.jspecify.annotations.Nullable;

/**
 * A primary, without a replica or with one, and one Sentinel monitoring it with a quorum of one, each a
 * {@link RedisServerProcess} on a loopback port. {@link #close()} stops them all and deletes their folders.
 */
public final class LocalRedisSentinel implements AutoCloseable {

	/** The name under which the Sentinel knows the primary. */
	public static final String PRIMARY_NAME = "primary";

	private final RedisServerProcess primary;

	private final @Nullable RedisServerProcess replica;

	private final RedisServerProcess sentinel;

	private LocalRedisSentinel(RedisServerProcess primary, @Nullable RedisServerProcess replica,
			RedisServerProcess sentinel) {
		this.primary = primary;
		this.replica = replica;
		this.sentinel = sentinel;
	}

	/**
	 * Starts the primary, then the Sentinel.
	 * @return the running pair
	 */
	public static LocalRedisSentinel start() {
		RedisServerProcess primary = RedisServerProcess.start();
		try {
			return new LocalRedisSentinel(primary, null,
					RedisServerProcess.startSentinel(PRIMARY_NAME, primary.port(), Duration.ofSeconds(30)));
		}
		catch (RuntimeException ex) {
			primary.close();
			throw ex;
		}
	}

	/**
	 * Starts the primary, a replica of it, then the Sentinel, which holds the primary down after
	 * {@code downAfter} without an answer and then promotes the replica.
	 * @param downAfter how long the primary may not answer before the Sentinel fails it over
	 * @return the running set
	 */
	public static LocalRedisSentinel startWithReplica(Duration downAfter) {
		RedisServerProcess primary = RedisServerProcess.start();
		RedisServerProcess replica = null;
		try {
			replica = RedisServerProcess.start("--replicaof", "127.0.0.1", Integer.toString(primary.port()));
			return new LocalRedisSentinel(primary, replica,
					RedisServerProcess.startSentinel(PRIMARY_NAME, primary.port(), downAfter));
		}
		catch (RuntimeException ex) {
			if (replica != null) {
				replica.close();
			}
			primary.close();
			throw ex;
		}
	}

	/**
	 * Returns the primary, which holds the data.
	 * @return the primary
	 */
	public RedisServerProcess primary() {
		return this.primary;
	}

	/**
	 * Returns the port of the server that the Sentinel names as the primary now.
	 * @return the port, or -1 if the Sentinel does not answer
	 */
	public int primaryPort() {
		try {
			// an array of host and port: its first line is the array's length, the host and the port follow
			return Integer.parseInt(this.sentinel.lines(5, "SENTINEL", "GET-MASTER-ADDR-BY-NAME", PRIMARY_NAME).get(4));
		}
		catch (RuntimeException ex) {
			return -1;
		}
	}

	/**
	 * Returns the replica, if started with one.
	 * @return the replica
	 */
	public RedisServerProcess replica() {
		if (this.replica == null) {
			throw new IllegalStateException("Started without a replica");
		}
		return this.replica;
	}

	/**
	 * Returns the Sentinel's port on 127.0.0.1.
	 * @return the port
	 */
	public int sentinelPort() {
		return this.sentinel.port();
	}

	@Override
	public void close() {
		this.sentinel.close();
		if (this.replica != null) {
			this.replica.close();
		}
		this.primary.close();
	}

}
