package dev.ratelimit.core.jdbc;

import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import dev.ratelimit.core.RateLimitStore;

/**
 * The instances that share the store's table: each writes its heartbeat about once a second in the table's
 * {@code _fleet} table, and counts the members seen within the last {@link #LIVE three seconds}, itself included.
 * A heartbeat that the database answers also ends an outage, so that the store decides in the database again
 * soon after it answers, whether or not requests come: during an outage the heartbeat is tried every
 * {@link #OUTAGE_PERIOD fifth of a second}. While the database does not answer, the last count stands. Each
 * heartbeat also reads the version of the fleet's {@link FleetChanges shared changes}, whose listener it tells when
 * they have changed.
 */
final class DatabaseFleet implements RateLimitStore.Fleet, AutoCloseable {

	/** How long a member counts after its last heartbeat. */
	static final Duration LIVE = Duration.ofSeconds(3);

	/** How often each member writes its heartbeat. */
	static final Duration PERIOD = Duration.ofSeconds(1);

	/** How often the heartbeat is tried while the database is failing, as the end of the outage it checks for. */
	static final Duration OUTAGE_PERIOD = Duration.ofMillis(200);

	private final String member = UUID.randomUUID().toString();

	private final StateCalls calls;

	private final DatabaseFailures failures;

	private final FleetChanges changes;

	private final ScheduledExecutorService scheduler;

	private volatile int size = 1;

	/** When the last heartbeat was tried, on the system's clock; touched by the scheduler's thread only. */
	private long lastBeat;

	private boolean beaten;

	/**
	 * @param scheduler where the heartbeat runs, from {@link #newScheduler()}, shut down on {@link #close()}
	 */
	DatabaseFleet(StateCalls calls, DatabaseFailures failures, FleetChanges changes,
			ScheduledExecutorService scheduler) {
		this.calls = calls;
		this.failures = failures;
		this.changes = changes;
		this.scheduler = scheduler;
		this.scheduler.scheduleWithFixedDelay(this::tick, 0, OUTAGE_PERIOD.toMillis(), TimeUnit.MILLISECONDS);
	}

	/** A daemon thread of the store's own, for the heartbeat and the log's lines. */
	static ScheduledExecutorService newScheduler() {
		return Executors.newSingleThreadScheduledExecutor((task) -> {
			Thread thread = new Thread(task, "ratelimit-jdbc-fleet");
			thread.setDaemon(true);
			return thread;
		});
	}

	@Override
	public int size() {
		return this.size;
	}

	private void tick() {
		long now = System.nanoTime();
		if (!this.beaten || now - this.lastBeat >= PERIOD.toNanos() || this.failures.failing()) {
			this.beaten = true;
			this.lastBeat = now;
			beat();
		}
	}

	private void beat() {
		try {
			StateCalls.Heartbeat heartbeat = this.calls.heartbeat(this.member, (int) LIVE.toMillis());
			this.size = Math.max(1, heartbeat.members());
			this.failures.answered();
			this.changes.heard(heartbeat.changes());
		}
		catch (BoundedCalls.CallFailure | RuntimeException ex) {
			// the decisions' own calls count the failures; the last count stands meanwhile
		}
	}

	/** Stops the heartbeat and leaves the fleet, so that the others count this instance no more. */
	@Override
	public void close() {
		this.scheduler.shutdownNow();
		try {
			this.calls.leave(this.member);
		}
		catch (BoundedCalls.CallFailure | RuntimeException ex) {
			// the others stop counting it once its last heartbeat is older than LIVE
		}
	}

}
