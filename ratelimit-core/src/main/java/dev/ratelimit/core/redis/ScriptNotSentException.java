package dev.ratelimit.core.redis;

import java.util.Objects;

import org.jspecify.annotations.Nullable;

/**
 * The failure a {@link RedisScriptExecutor} completes a call with when it did not send the call to Redis, so that
 * Redis cannot run it later, and why. Any other failure of a call may have reached Redis.
 * <p>
 * The {@link RedisRateLimitStore} tells the two reasons apart: a Redis that cannot be reached is failing, and the
 * store switches to its failure policy at once; a client that had no connection free is a shortage on this
 * instance's side, which the store does not blame on Redis.
 */
public final class ScriptNotSentException extends RuntimeException {

	private static final long serialVersionUID = 1L;

	private final Reason reason;

	/**
	 * Creates the failure.
	 * @param reason why the call was not sent
	 * @param message what happened, for the log
	 * @param cause the client's own exception, if any
	 */
	public ScriptNotSentException(Reason reason, String message, @Nullable Throwable cause) {
		super(message, cause);
		this.reason = Objects.requireNonNull(reason, "reason must not be null");
	}

	/**
	 * Returns why the call was not sent.
	 * @return the reason
	 */
	public Reason reason() {
		return this.reason;
	}

	/**
	 * Why a call was not sent.
	 */
	public enum Reason {

		/**
		 * There is no connection to Redis: it was refused, closed, or is not open yet, and the client rejects
		 * commands rather than queue them until it reconnects.
		 */
		UNREACHABLE,

		/**
		 * The client had no connection free for the call within the store's timeout, such as an exhausted
		 * connection pool: a shortage on this instance's side, not a Redis failure.
		 */
		CLIENT_BUSY

	}

}
