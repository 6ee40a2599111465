package dev.ratelimit.core.internal;

import java.lang.System.Logger.Level;
import java.util.Collection;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLongArray;

import org.jspecify.annotations.Nullable;

import dev.ratelimit.core.FailurePolicy;
import dev.ratelimit.core.TimeSource;

/**
 * Reports decisions made without a store's server without flooding the log, whatever the pattern of failures: at
 * most one stack trace per {@link #STACK_TRACE_PERIOD_NANOS minute}, and at most one line of each kind per
 * {@link #LINE_PERIOD_NANOS ten seconds}: that an outage began, how many decisions the failure policy made and
 * why (at the latest at the first answer in time a period after the last such line), how many give-backs
 * failed, that the server decides again, and that the failure listener threw.
 */
public final class FailureLog {

	/** At most one line of each kind per this period. */
	public static final long LINE_PERIOD_NANOS = TimeUnit.SECONDS.toNanos(10);

	/** At most one stack trace per this period. */
	public static final long STACK_TRACE_PERIOD_NANOS = TimeUnit.MINUTES.toNanos(1);

	private static final FailureKind[] KINDS = FailureKind.values();

	private final System.Logger logger;

	/** The server's name, as the lines call it. */
	private final String server;

	private final FailurePolicy policy;

	private final TimeSource ticker;

	/** Decisions made without the server since the last count line, by kind of failure. */
	private final AtomicLongArray unreported = new AtomicLongArray(KINDS.length);

	/** When each kind of line, and a stack trace, was last written: at most one each per period. */
	private final Period stackTraces = new Period(STACK_TRACE_PERIOD_NANOS);

	private final Period outageLines = new Period(LINE_PERIOD_NANOS);

	private final Period countLines = new Period(LINE_PERIOD_NANOS);

	private final Period recoveryLines = new Period(LINE_PERIOD_NANOS);

	private final Period listenerLines = new Period(LINE_PERIOD_NANOS);

	private final Period giveBackLines = new Period(LINE_PERIOD_NANOS);

	private final Period lostLines = new Period(LINE_PERIOD_NANOS);

	/** Give-backs that failed since the last give-back line. */
	private long unreportedGiveBacks;

	/** Client keys whose state the server had lost since the last line that said so. */
	private long unreportedLost;

	/** Whether decisions made without the server wait for the next count line, the last of them failing with this. */
	private volatile boolean pending;

	private @Nullable Throwable lastCause;

	/** Whether the last outage line has had its recovery line. */
	private boolean outageReported;

	/** Decisions made without the server since the last outage began. */
	private long duringOutage;

	/** Writes the lines, off the request threads: a cold logger can take longer than the store's timeout. */
	private final Executor writer;

	/**
	 * Creates the log of one store.
	 * @param logger where the lines go
	 * @param server the server's name, such as {@code "Redis"}
	 * @param policy the store's failure policy
	 * @param ticker the clock of the periods
	 * @param writer where the lines are written
	 */
	public FailureLog(System.Logger logger, String server, FailurePolicy policy, TimeSource ticker, Executor writer) {
		this.logger = logger;
		this.server = server;
		this.policy = policy;
		this.ticker = ticker;
		this.writer = writer;
	}

	/**
	 * An outage began.
	 * @param cause the failure that began it
	 */
	public synchronized void outageBegan(Throwable cause) {
		long now = this.ticker.nanoTime();
		this.duringOutage = 0;
		if (!this.outageLines.begins(now)) {
			return;
		}
		this.outageReported = true;
		log(Level.WARNING, this.server + " is failing; the " + this.policy
				+ " failure policy decides every request until " + this.server + " answers again", cause, now);
	}

	/**
	 * The failure policy decided a request that the server did not.
	 * @param kind why the server did not
	 * @param cause the failure
	 */
	public void failed(FailureKind kind, Throwable cause) {
		this.unreported.incrementAndGet(kind.ordinal());
		long now = this.ticker.nanoTime();
		synchronized (this) {
			this.duringOutage++;
			this.lastCause = cause;
			if (!this.countLines.begins(now)) {
				this.pending = true;
				return;
			}
			count(cause, now);
		}
	}

	/**
	 * The server answered a call in time: the decisions the failure policy made since the last count line are
	 * counted now if a period has passed, rather than at the next failure, which may be long in coming.
	 */
	public void answered() {
		if (!this.pending) {
			return;
		}
		long now = this.ticker.nanoTime();
		synchronized (this) {
			Throwable cause = this.lastCause;
			if (this.pending && cause != null && this.countLines.begins(now)) {
				count(cause, now);
			}
		}
	}

	/** Writes the count line of the decisions made without the server since the last one, in a period begun now. */
	private void count(Throwable cause, long now) {
		this.pending = false;
		StringBuilder counts = new StringBuilder();
		long total = 0;
		for (FailureKind each : KINDS) {
			long count = this.unreported.getAndSet(each.ordinal(), 0);
			if (count > 0) {
				counts.append((total == 0) ? "" : ", ").append(count).append(' ').append(describe(each));
				total += count;
			}
		}
		log(Level.WARNING, this.server + " did not decide " + total + ((total == 1) ? " request" : " requests")
				+ " since the last report (" + counts
				+ "); the " + this.policy + " failure policy decided them. Last failure: " + cause, cause, now);
	}

	/** The server decides again after an outage. */
	public synchronized void recovered() {
		long now = this.ticker.nanoTime();
		if (!this.outageReported || !this.recoveryLines.begins(now)) {
			return;
		}
		this.outageReported = false;
		String message = this.server + " decides again; the " + this.policy + " failure policy made " + this.duringOutage
				+ " decisions since the outage began";
		write(() -> this.logger.log(Level.INFO, message));
	}

	/**
	 * The server did not take back the permits of a request, which stay taken.
	 * @param cause the failure
	 */
	public synchronized void giveBackFailed(Throwable cause) {
		long now = this.ticker.nanoTime();
		this.unreportedGiveBacks++;
		if (!this.giveBackLines.begins(now)) {
			return;
		}
		long count = this.unreportedGiveBacks;
		this.unreportedGiveBacks = 0;
		log(Level.WARNING, this.server + " did not take back the permits of " + count
				+ ((count == 1) ? " request" : " requests")
				+ " since the last report; they stay taken until their limits free them. Last failure: " + cause,
				cause, now);
	}

	/**
	 * The server had lost the state of a client key that this instance expected it to hold, and is told what this
	 * instance last heard of it: at most one line per period, counting the keys since the last.
	 */
	public synchronized void stateLost() {
		long now = this.ticker.nanoTime();
		this.unreportedLost++;
		if (!this.lostLines.begins(now)) {
			return;
		}
		String message = this.server + " had lost the state of " + this.unreportedLost + " client "
				+ ((this.unreportedLost == 1) ? "key" : "keys") + " since the last report (an empty restart, a "
				+ "flush, an eviction or a failover to a replica that missed it); this instance told it, before "
				+ "deciding again, how many permits it last heard were left of each";
		this.unreportedLost = 0;
		write(() -> this.logger.log(Level.WARNING, message));
	}

	/**
	 * A reset that the server carried out, but did not count for the other instances; an operator's act, each
	 * logged.
	 * @param cause why it was not counted
	 */
	public synchronized void resetNotShared(Throwable cause) {
		log(Level.WARNING, "A key was reset, but " + this.server
				+ " did not count the reset for the other instances: each keeps the denials it holds locally for "
				+ "the key until they expire. Cause: " + cause, cause,
				this.ticker.nanoTime());
	}

	/**
	 * A failure listener threw.
	 * @param ex what it threw
	 */
	public synchronized void listenerFailed(RuntimeException ex) {
		long now = this.ticker.nanoTime();
		if (!this.listenerLines.begins(now)) {
			return;
		}
		log(Level.WARNING, "The " + this.server + " failure listener threw an exception: " + ex, ex, now);
	}

	/**
	 * The fleet's shared runtime changes were gone from the server, and this instance wrote back those it knew,
	 * {@code restored} of them, found newer changes in their place ({@code -1}), or could not.
	 * @param policies the policies whose changes it knew
	 * @param restored how many it wrote back, or {@code -1}
	 * @param failure why it could not, or null
	 */
	public void changesRestored(Collection<String> policies, long restored, @Nullable Throwable failure) {
		String known = String.join(", ", policies);
		write(() -> {
			if (failure == null && restored < 0) {
				this.logger.log(Level.WARNING, "The runtime changes the fleet shares were gone from " + this.server
						+ ", and newer changes took their place before this instance could write back the "
						+ policies.size() + " it knew, of " + known + "; it follows the newer ones");
			}
			else if (failure == null) {
				this.logger.log(Level.WARNING, "The runtime changes the fleet shares were gone from " + this.server + " (an empty "
						+ "restart, a flush, an eviction or a failover); this instance wrote back " + restored
						+ " of the " + policies.size() + " it knows, of " + known);
			}
			else {
				this.logger.log(Level.WARNING, "The runtime changes the fleet shares are gone from " + this.server + ", and this "
						+ "instance could not write back the " + policies.size() + " it knows, of " + known
						+ "; it keeps applying them and tries again at its next heartbeat: " + failure);
			}
		});
	}

	/** Writes the line, with the stack trace when none was written within the last minute. */
	private void log(Level level, String message, Throwable cause, long now) {
		if (this.stackTraces.begins(now)) {
			write(() -> this.logger.log(level, message, cause));
		}
		else {
			write(() -> this.logger.log(level, message));
		}
	}

	private void write(Runnable line) {
		try {
			this.writer.execute(line);
		}
		catch (RejectedExecutionException ex) {
			// the store is closed and its scheduler with it
			line.run();
		}
	}

	/**
	 * At most one of a kind of line per period: a line may be written when none was, or the last was written a
	 * period ago or more. Guarded by the log's lock.
	 */
	private static final class Period {

		private final long nanos;

		private boolean any;

		private long last;

		Period(long nanos) {
			this.nanos = nanos;
		}

		/** Whether a line may be written at {@code now}; if so, a new period begins. */
		boolean begins(long now) {
			if (this.any && now - this.last < this.nanos) {
				return false;
			}
			this.any = true;
			this.last = now;
			return true;
		}

	}

	private String describe(FailureKind kind) {
		return switch (kind) {
			case UNREACHABLE -> "with " + this.server + " unreachable";
			case SLOW -> "not answered in time";
			case ERROR -> "answered with an error";
			case CLIENT_BUSY -> "with no client connection free";
			case INTERRUPTED -> "interrupted";
			case LOST -> "finding state " + this.server + " had lost";
		};
	}

}
