package dev.ratelimit.core.internal;

/**
 * Why a store's server did not decide a call, and whether that counts towards an outage of the server.
 */
public enum FailureKind {

	/** The server cannot be reached: the store switches to its failure policy at once. */
	UNREACHABLE(true),

	/** The server did not answer within the timeout, or ran the call after its deadline. */
	SLOW(true),

	/** The server answered with an error, or with a reply that is not the call's. */
	ERROR(true),

	/** This instance's client had no connection free: not the server's fault. */
	CLIENT_BUSY(false),

	/** The caller's thread was interrupted: not the server's fault. */
	INTERRUPTED(false),

	/**
	 * The server answered that it has lost a state the caller expected it to hold, and took nothing: an answer,
	 * which the caller deals with, not an outage.
	 */
	LOST(false);

	private final boolean blamesServer;

	FailureKind(boolean blamesServer) {
		this.blamesServer = blamesServer;
	}

	/**
	 * Returns whether a failure of this kind counts towards an outage of the server.
	 * @return whether the server is to blame
	 */
	public boolean blamesServer() {
		return this.blamesServer;
	}

}
