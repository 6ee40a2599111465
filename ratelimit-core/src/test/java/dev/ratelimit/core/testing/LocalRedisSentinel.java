package dev.ratelimit.core.testing;

/**
 * A primary and one Sentinel monitoring it with a quorum of one, each a {@link RedisServerProcess} on a
 * loopback port. {@link #close()} stops both and deletes their folders.
 */
public final class LocalRedisSentinel implements AutoCloseable {

	/** The name under which the Sentinel knows the primary. */
	public static final String PRIMARY_NAME = "primary";

	private final RedisServerProcess primary;

	private final RedisServerProcess sentinel;

	private LocalRedisSentinel(RedisServerProcess primary, RedisServerProcess sentinel) {
		this.primary = primary;
		this.sentinel = sentinel;
	}

	/**
	 * Starts the primary, then the Sentinel.
	 * @return the running pair
	 */
	public static LocalRedisSentinel start() {
		RedisServerProcess primary = RedisServerProcess.start();
		try {
			return new LocalRedisSentinel(primary, RedisServerProcess.startSentinel(PRIMARY_NAME, primary.port()));
		}
		catch (RuntimeException ex) {
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
	 * Returns the Sentinel's port on 127.0.0.1.
	 * @return the port
	 */
	public int sentinelPort() {
		return this.sentinel.port();
	}

	@Override
	public void close() {
		this.sentinel.close();
		this.primary.close();
	}

}
