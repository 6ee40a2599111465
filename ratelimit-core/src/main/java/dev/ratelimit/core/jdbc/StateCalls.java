package dev.ratelimit.core.jdbc;

import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

import org.jspecify.annotations.Nullable;

import dev.ratelimit.core.Decision;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.internal.CalendarBounds;
import dev.ratelimit.core.TimeSource;
import dev.ratelimit.core.internal.PolicyLimiters.Predecessor;

/**
 * Writes the calls of the database functions and reads their replies: one prepared statement per call, on a
 * connection of the data source in autocommit, so that each call is one round trip and one transaction, waited
 * for at most the store's timeout.
 */
final class StateCalls {

	/** The integers the decide function replies per limit. */
	private static final int REPLY = 9;

	/**
	 * The key the warm-up peeks at, after the key prefix: a peek takes nothing, so that a client of that key
	 * loses nothing; the row it may leave is full, and goes with the next deletion of expired rows.
	 */
	static final String WARM_UP_KEY = "%warm-up";

	private final BoundedCalls calls;

	private final String prefix;

	private final @Nullable TimeSource timeSource;

	private final String decide;

	private final String giveBack;

	private final String reset;

	private final String resetAll;

	private final String deleteExpired;

	private final String deleteExpiredLeases;

	private final String heartbeat;

	private final String leave;

	StateCalls(BoundedCalls calls, String table, String prefix, @Nullable TimeSource timeSource) {
		this.calls = calls;
		this.prefix = prefix;
		this.timeSource = timeSource;
		this.decide = "SELECT " + table + "_decide(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
		this.giveBack = "SELECT " + table + "_give_back(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
		this.reset = "DELETE FROM " + table + " WHERE key = ? AND policy = ANY (?)";
		// locked in the order every decision locks, so that a reset never deadlocks with one
		this.resetAll = "DELETE FROM " + table + " WHERE (key, policy) IN (SELECT key, policy FROM " + table
				+ " WHERE starts_with(key, ?) ORDER BY key, policy FOR UPDATE)";
		// rows a decision holds are skipped, and the lock checks the expiry again on the newest version of each
		this.deleteExpired = "DELETE FROM " + table + " WHERE (key, policy) IN (SELECT key, policy FROM " + table
				+ " WHERE expires_at <= " + table + "_now(?) AND starts_with(key, ?) LIMIT ? FOR UPDATE SKIP LOCKED)";
		this.deleteExpiredLeases = "DELETE FROM " + table + "_leases WHERE ctid IN (SELECT ctid FROM " + table
				+ "_leases WHERE expires_at <= " + table + "_now(?) AND starts_with(key, ?) LIMIT ? FOR UPDATE SKIP LOCKED)";
		this.heartbeat = "SELECT " + table + "_heartbeat(?, ?), (SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM "
				+ table + "_version)";
		this.leave = "DELETE FROM " + table + "_fleet WHERE member = ?";
	}

	/** The clock that a request waiting for the permits it reserved waits on. */
	TimeSource clock() {
		return (this.timeSource != null) ? this.timeSource : TimeSource.system();
	}

	/** Now, in the clock of {@link Predecessor#untilNanos()}. */
	long nowNanos() {
		return clock().nanoTime();
	}

	/**
	 * How long from now until an allowed request may go ahead: its delay counted from the instant the database
	 * decided it at, where that instant is in the time source's clock, else from now, the reply's arrival.
	 */
	long untilDue(Decision decision) {
		if (decision.delayNanos() == 0 || this.timeSource == null) {
			return decision.delayNanos();
		}
		return decision.takenAt() * 1000 + decision.delayNanos() - this.timeSource.nanoTime();
	}

	/**
	 * Decides one request under the limiters' policies, limiter i on {@code keys.get(i)}, all or nothing; with
	 * {@code peek}, takes nothing and replies as to a request another limit refused.
	 * @throws BoundedCalls.CallFailure if the database did not decide within the timeout
	 */
	List<Decision> decide(List<String> keys, List<JdbcLimiter> limiters, boolean peek)
			throws BoundedCalls.CallFailure {
		return decide(keys, limiters, peek, false);
	}

	/**
	 * Peeks once at the state of the warm-up's key under the limiters' policies, taking nothing, so that the
	 * database has compiled the functions that decide them: waits past the timeout if need be.
	 * @throws BoundedCalls.CallFailure if the database did not answer, or failed
	 */
	void warmUp(List<JdbcLimiter> limiters) throws BoundedCalls.CallFailure {
		decide(Collections.nCopies(limiters.size(), WARM_UP_KEY), limiters, true, true);
	}

	private List<Decision> decide(List<String> keys, List<JdbcLimiter> limiters, boolean peek, boolean patiently)
			throws BoundedCalls.CallFailure {
		int n = limiters.size();
		String[] stateKeys = new String[n];
		String[] states = new String[n];
		String[] algorithms = new String[n];
		Long[] limits = new Long[n];
		Long[] windows = new Long[n];
		long[] calendars = new long[n * CalendarBounds.SIZE];
		Long[] bursts = new Long[n];
		Long[] costs = new Long[n];
		Long[] shapings = new Long[n];
		Long[] penalties = new Long[n];
		List<Carry> carries = new ArrayList<>();
		Long now = nowMicros();
		long wall = (now != null) ? now : ChronoUnit.MICROS.between(Instant.EPOCH, Instant.now());
		long sent = nowNanos();
		for (int i = 0; i < n; i++) {
			JdbcLimiter limiter = limiters.get(i);
			RateLimitPolicy policy = limiter.policy();
			stateKeys[i] = this.prefix + keys.get(i);
			states[i] = limiter.stateName;
			algorithms[i] = policy.algorithm().name();
			limits[i] = policy.limit();
			windows[i] = policy.windowMicros();
			limiter.addCalendar(calendars, i * CalendarBounds.SIZE, wall);
			bursts[i] = policy.burst();
			costs[i] = policy.cost();
			shapings[i] = limiter.shaping();
			penalties[i] = policy.penaltyMicros();
			for (Predecessor<JdbcLimiter> predecessor : limiter.predecessors) {
				if (predecessor.untilNanos() - sent > 0) {
					carries.add(new Carry(i + 1, predecessor.limiter()));
				}
			}
		}
		Long[] reply = call(this.decide, patiently, (connection, statement) -> {
			setNow(statement, 1, now);
			statement.setBoolean(2, peek);
			statement.setArray(3, connection.createArrayOf("text", stateKeys));
			statement.setArray(4, connection.createArrayOf("text", states));
			statement.setArray(5, connection.createArrayOf("text", algorithms));
			statement.setArray(6, connection.createArrayOf("int8", limits));
			statement.setArray(7, connection.createArrayOf("int8", windows));
			statement.setArray(8, connection.createArrayOf("int8", boxed(calendars)));
			statement.setArray(9, connection.createArrayOf("int8", bursts));
			statement.setArray(10, connection.createArrayOf("int8", costs));
			statement.setArray(11, connection.createArrayOf("int8", shapings));
			statement.setArray(12, connection.createArrayOf("int8", penalties));
			Carry.set(connection, statement, 13, carries);
		});
		List<Decision> decisions = new ArrayList<>(n);
		for (int i = 0; i < n; i++) {
			decisions.add(decision(limiters.get(i).policy(), reply, REPLY * i));
		}
		return decisions;
	}

	/**
	 * Gives back the permits of the allowed decisions, limiter i's on {@code keys.get(i)}, at once.
	 * @throws BoundedCalls.CallFailure if the database did not take them back within the timeout
	 */
	void giveBack(List<String> keys, List<JdbcLimiter> limiters, List<Decision> decisions)
			throws BoundedCalls.CallFailure {
		List<Integer> taken = new ArrayList<>();
		for (int i = 0; i < decisions.size(); i++) {
			if (decisions.get(i).taken()) {
				taken.add(i);
			}
		}
		if (taken.isEmpty()) {
			return;
		}
		int n = taken.size();
		String[] stateKeys = new String[n];
		String[] states = new String[n];
		String[] algorithms = new String[n];
		Long[] limits = new Long[n];
		Long[] windows = new Long[n];
		long[] calendars = new long[n * CalendarBounds.SIZE];
		Long[] bursts = new Long[n];
		Long[] costs = new Long[n];
		Long[] takenAt = new Long[n];
		Long now = nowMicros();
		long wall = (now != null) ? now : ChronoUnit.MICROS.between(Instant.EPOCH, Instant.now());
		for (int j = 0; j < n; j++) {
			int i = taken.get(j);
			JdbcLimiter limiter = limiters.get(i);
			RateLimitPolicy policy = limiter.policy();
			stateKeys[j] = this.prefix + keys.get(i);
			states[j] = limiter.stateName;
			algorithms[j] = policy.algorithm().name();
			limits[j] = policy.limit();
			windows[j] = policy.windowMicros();
			limiter.addCalendar(calendars, j * CalendarBounds.SIZE, wall);
			bursts[j] = policy.burst();
			costs[j] = policy.cost();
			takenAt[j] = decisions.get(i).takenAt();
		}
		this.calls.call(this.giveBack, (connection, statement) -> {
			setNow(statement, 1, now);
			statement.setArray(2, connection.createArrayOf("text", stateKeys));
			statement.setArray(3, connection.createArrayOf("text", states));
			statement.setArray(4, connection.createArrayOf("text", algorithms));
			statement.setArray(5, connection.createArrayOf("int8", limits));
			statement.setArray(6, connection.createArrayOf("int8", windows));
			statement.setArray(7, connection.createArrayOf("int8", boxed(calendars)));
			statement.setArray(8, connection.createArrayOf("int8", bursts));
			statement.setArray(9, connection.createArrayOf("int8", costs));
			statement.setArray(10, connection.createArrayOf("int8", takenAt));
			return statement.execute();
		});
	}

	/** Deletes the key's states under the limiter's policy and every policy it changed from. */
	void reset(String key, JdbcLimiter limiter) {
		List<String> states = new ArrayList<>();
		states.add(limiter.stateName);
		limiter.predecessors.forEach((predecessor) -> states.add(predecessor.limiter().stateName));
		update(this.reset, (connection, statement) -> {
			statement.setString(1, this.prefix + key);
			statement.setArray(2, connection.createArrayOf("text", states.toArray()));
		});
	}

	/** Deletes every state of the key prefix; returns how many. */
	int resetAll() {
		return update(this.resetAll, (connection, statement) -> statement.setString(1, this.prefix));
	}

	/**
	 * Deletes at most {@code max} states of the key prefix that are full again and in no decision's hands, then,
	 * within the same count, expired leases of requests in flight.
	 */
	int deleteExpired(int max) {
		Long now = nowMicros();
		int states = update(this.deleteExpired, (connection, statement) -> {
			setNow(statement, 1, now);
			statement.setString(2, this.prefix);
			statement.setInt(3, max);
		});
		if (states == max) {
			return states;
		}
		return states + update(this.deleteExpiredLeases, (connection, statement) -> {
			setNow(statement, 1, now);
			statement.setString(2, this.prefix);
			statement.setInt(3, max - states);
		});
	}

	/**
	 * Says that {@code member} is alive, and counts the members seen within {@code liveMillis}, itself included.
	 * @throws BoundedCalls.CallFailure if the database did not answer within the timeout
	 */
	Heartbeat heartbeat(String member, int liveMillis) throws BoundedCalls.CallFailure {
		return this.calls.call(this.heartbeat, (connection, statement) -> {
			statement.setString(1, member);
			statement.setInt(2, liveMillis);
			try (ResultSet result = statement.executeQuery()) {
				result.next();
				return new Heartbeat(result.getInt(1), result.getLong(2));
			}
		});
	}

	/**
	 * Deletes {@code member} from the fleet, which the others count no more.
	 * @throws BoundedCalls.CallFailure if the database did not answer within the timeout
	 */
	void leave(String member) throws BoundedCalls.CallFailure {
		this.calls.call(this.leave, (connection, statement) -> {
			statement.setString(1, member);
			return statement.executeUpdate();
		});
	}

	/** The time source's now in microseconds, or null for the database's clock. */
	@Nullable Long nowMicros() {
		return (this.timeSource != null) ? Math.floorDiv(this.timeSource.nanoTime(), 1000) : null;
	}

	/** Binds the instant of a call in microseconds, or null for the database's clock. */
	static void setNow(PreparedStatement statement, int index, @Nullable Long now) throws SQLException {
		if (now != null) {
			statement.setLong(index, now);
		}
		else {
			statement.setNull(index, Types.BIGINT);
		}
	}

	private Long[] call(String sql, boolean patiently, Binder binder) throws BoundedCalls.CallFailure {
		BoundedCalls.Work<Long[]> work = (connection, statement) -> {
			binder.bind(connection, statement);
			try (ResultSet result = statement.executeQuery()) {
				result.next();
				Array array = result.getArray(1);
				return (array != null && array.getArray() instanceof Long[] values) ? values : new Long[0];
			}
		};
		return patiently ? this.calls.callPatiently(sql, work) : this.calls.call(sql, work);
	}

	private int update(String sql, Binder binder) {
		try {
			return this.calls.call(sql, (connection, statement) -> {
				binder.bind(connection, statement);
				return statement.executeUpdate();
			});
		}
		catch (BoundedCalls.CallFailure ex) {
			throw new IllegalStateException("The rate limit states could not be deleted: " + ex.getCause().getMessage(),
					ex.getCause());
		}
	}

	private static Long[] boxed(long[] values) {
		Long[] boxed = new Long[values.length];
		for (int i = 0; i < values.length; i++) {
			boxed[i] = values[i];
		}
		return boxed;
	}

	/**
	 * Reads one policy's nine integers: microseconds rounded up, the nanoseconds that rounding added, and the
	 * instant of the decision.
	 */
	private static Decision decision(RateLimitPolicy policy, Long[] reply, int offset) {
		boolean allowed = reply[offset] == 1;
		return new Decision(allowed, policy.limit(), reply[offset + 1], reply[offset + 2] * 1000 - reply[offset + 5],
				reply[offset + 3] * 1000 - reply[offset + 6], reply[offset + 4] * 1000 - reply[offset + 7],
				allowed ? reply[offset + 8] : Decision.NOT_TAKEN);
	}

	/**
	 * What a heartbeat tells: how many members the fleet has, and the version of its shared changes, 0 before the
	 * first.
	 */
	record Heartbeat(int members, long changes) {
	}

	@FunctionalInterface
	private interface Binder {

		void bind(Connection connection, PreparedStatement statement) throws SQLException;

	}

	/** A policy that limit number {@code limit} (from 1) changed from, whose permits it carries over. */
	private record Carry(int limit, JdbcLimiter from) {

		/** Sets the seven arrays of the carry-overs from {@code index} on. */
		static void set(Connection connection, PreparedStatement statement, int index, List<Carry> carries)
				throws SQLException {
			int m = carries.size();
			Integer[] limits = new Integer[m];
			String[] states = new String[m];
			Long[] limitsOf = new Long[m];
			Long[] windows = new Long[m];
			Long[] bursts = new Long[m];
			Long[] capacities = new Long[m];
			Long[] shapings = new Long[m];
			for (int j = 0; j < m; j++) {
				Carry carry = carries.get(j);
				RateLimitPolicy policy = carry.from.policy();
				limits[j] = carry.limit;
				states[j] = carry.from.stateName;
				limitsOf[j] = policy.limit();
				windows[j] = policy.windowMicros();
				bursts[j] = policy.burst();
				capacities[j] = policy.capacity();
				shapings[j] = carry.from.shaping();
			}
			statement.setArray(index, connection.createArrayOf("int4", limits));
			statement.setArray(index + 1, connection.createArrayOf("text", states));
			statement.setArray(index + 2, connection.createArrayOf("int8", limitsOf));
			statement.setArray(index + 3, connection.createArrayOf("int8", windows));
			statement.setArray(index + 4, connection.createArrayOf("int8", bursts));
			statement.setArray(index + 5, connection.createArrayOf("int8", capacities));
			statement.setArray(index + 6, connection.createArrayOf("int8", shapings));
		}

	}

}
