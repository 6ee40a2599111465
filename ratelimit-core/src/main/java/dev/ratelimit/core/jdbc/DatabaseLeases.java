package dev.ratelimit.core.jdbc;

import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.jspecify.annotations.Nullable;

import dev.ratelimit.core.RateLimitStore;

/**
 * Requests in flight across the instances that share the table: each holds a lease, a row of the table's
 * {@code _leases} table, which this instance renews every third of the lease's life while the request runs. An
 * instance that dies holding leases stops renewing them, and they expire within a lease's life, so no permit is
 * lost for good and the fleet never holds more than the limit at once while the database answers. A call that the
 * database does not answer in time is decided by the failure policy; a release it does not answer lets the lease
 * expire.
 */
final class DatabaseLeases implements RateLimitStore.InFlight, AutoCloseable {

	private final BoundedCalls calls;

	private final StateCalls states;

	private final DatabaseFailures failures;

	private final Executor executor;

	private final long leaseMicros;

	private final String prefix;

	private final String acquire;

	private final String release;

	private final String renew;

	/** Unique to this instance, so that no two instances' leases have the same name. */
	private final String instance = UUID.randomUUID().toString();

	private final AtomicLong leases = new AtomicLong();

	/** The leases this instance holds, by name. */
	private final Map<String, Held> held = new ConcurrentHashMap<>();

	private final ScheduledFuture<?> renewal;

	/**
	 * @param executor where a call waits for the database, so that {@link #acquire} and the release never block
	 * their caller
	 * @param scheduler where the renewal of the leases held is scheduled, every third of their life
	 */
	DatabaseLeases(BoundedCalls calls, StateCalls states, DatabaseFailures failures, Executor executor,
			ScheduledExecutorService scheduler, String table, String prefix, long leaseMicros) {
		this.calls = calls;
		this.states = states;
		this.failures = failures;
		this.executor = executor;
		this.leaseMicros = leaseMicros;
		this.acquire = "SELECT " + table + "_acquire(?, ?, ?, ?, ?, ?)";
		this.release = "DELETE FROM " + table + "_leases WHERE key = ? AND name = ? AND lease = ?";
		this.renew = "UPDATE " + table + "_leases l SET expires_at = " + table + "_now(?) + ? FROM unnest(?, ?, ?) AS "
				+ "u(k, n, e) WHERE l.key = u.k AND l.name = u.n AND l.lease = u.e";
		this.prefix = prefix;
		long every = Math.max(1, leaseMicros / 3);
		this.renewal = scheduler.scheduleWithFixedDelay(this::renewLater, every, every, TimeUnit.MICROSECONDS);
	}

	@Override
	public CompletionStage<Permit> acquire(String name, String key, long limit) {
		RateLimitStore.InFlight.checkLimit(name, limit);
		Objects.requireNonNull(key, "key must not be null");
		Held lease = new Held(this.prefix + key, name, this.instance + ":" + this.leases.incrementAndGet());
		try {
			return CompletableFuture.supplyAsync(
					() -> this.failures.inFlight(name, key, limit, () -> take(lease, limit)), this.executor);
		}
		catch (RejectedExecutionException ex) {
			return CompletableFuture.failedFuture(ex);
		}
	}

	private Permit take(Held lease, long limit) throws BoundedCalls.CallFailure {
		@Nullable Long now = this.states.nowMicros();
		Long[] reply = this.calls.call(this.acquire, (connection, statement) -> {
			StateCalls.setNow(statement, 1, now);
			statement.setString(2, lease.key);
			statement.setString(3, lease.name);
			statement.setString(4, lease.lease);
			statement.setLong(5, limit);
			statement.setLong(6, this.leaseMicros);
			try (ResultSet result = statement.executeQuery()) {
				result.next();
				return (Long[]) result.getArray(1).getArray();
			}
		});
		if (reply[0] != 1) {
			return Permit.refused(reply[1]);
		}
		this.held.put(lease.lease, lease);
		return Permit.granted(reply[1], () -> {
			this.held.remove(lease.lease);
			offThread(() -> this.calls.call(this.release, (connection, statement) -> {
				statement.setString(1, lease.key);
				statement.setString(2, lease.name);
				statement.setString(3, lease.lease);
				return statement.executeUpdate();
			}));
		});
	}

	private void renewLater() {
		if (!this.held.isEmpty()) {
			offThread(this::renewAll);
		}
	}

	/**
	 * Renews every lease this instance holds: the requests holding them still run.
	 * @return how many the database renewed
	 * @throws BoundedCalls.CallFailure if the database did not renew them within the timeout
	 */
	int renewAll() throws BoundedCalls.CallFailure {
		List<Held> leases = new ArrayList<>(this.held.values());
		if (leases.isEmpty()) {
			return 0;
		}
		@Nullable Long now = this.states.nowMicros();
		return this.calls.call(this.renew, (connection, statement) -> {
			StateCalls.setNow(statement, 1, now);
			statement.setLong(2, this.leaseMicros);
			statement.setArray(3, connection.createArrayOf("text", leases.stream().map(Held::key).toArray()));
			statement.setArray(4, connection.createArrayOf("text", leases.stream().map(Held::name).toArray()));
			statement.setArray(5, connection.createArrayOf("text", leases.stream().map(Held::lease).toArray()));
			return statement.executeUpdate();
		});
	}

	/** Runs a call on the executor; one that fails or that the executor refuses lets its leases expire. */
	private void offThread(DatabaseFailures.Call<?> call) {
		try {
			this.executor.execute(() -> {
				try {
					call.call();
				}
				catch (BoundedCalls.CallFailure ex) {
					// the leases expire within their life
				}
			});
		}
		catch (RejectedExecutionException ex) {
			// the store is closing: the leases expire
		}
	}

	/** Stops renewing the leases held, which then expire unless released. */
	@Override
	public void close() {
		this.renewal.cancel(false);
	}

	/** A lease: the client's key after the prefix, the limit's name, and the lease's own name. */
	private record Held(String key, String name, String lease) {
	}

}
