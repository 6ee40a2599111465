package dev.ratelimit.core;

import java.math.BigInteger;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.time.temporal.ChronoUnit;
import java.util.Locale;
import java.util.Objects;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.jspecify.annotations.Nullable;

/**
 * How much traffic one key may send: {@code limit} permits per {@code window}, decided by an {@link Algorithm}.
 * <p>
 * A policy is validated when it is built, so an invalid one cannot exist: every error message names the bad
 * value. Its {@code name} identifies the policy's state in a store (two policies with the same name share
 * state in Redis), in response headers and in metrics.
 *
 * @param name identifies the policy: 1 to 100 characters among letters, digits and {@code . _ - :}
 * @param algorithm the algorithm deciding each request
 * @param limit permits per window, at least 1
 * @param window the window, positive and a whole number of microseconds
 * @param burst bucket capacity of the token bucket and GCRA, queue capacity of the leaky bucket; for the
 * window algorithms it must equal {@code limit}
 * @param cost permits each request takes, at least 1 and at most the capacity
 * @param delayAfter leaky bucket only: how many queued requests pass at once instead of waiting for their
 * slot (nginx {@code delay=}); {@code burst} passes the whole burst at once (nginx {@code nodelay}); 0 for
 * the other algorithms
 * @param maxWait GCRA and token bucket only: how long a request may wait for its permits rather than be refused,
 * at most the window. Such a request reserves them: it is allowed at once with {@link Decision#delayNanos()} the
 * wait before it may go ahead, and the requests after it queue behind it; if the wait would be longer it is
 * refused at once. {@link Duration#ZERO} for a request that never waits.
 * @param penalty how long a key is refused once this policy refused one of its requests, whatever the algorithm
 * would say meanwhile: every request of the key is refused, with the rest of the penalty as its retry-after,
 * and takes nothing, so that its quota refills. {@link Duration#ZERO} for a key refused only while it is over
 * the limit.
 * @param calendar FIXED_WINDOW only: the calendar whose days, weeks or months are the windows, with
 * {@code window} its {@link CalendarWindow#nominalLength() nominal length}; null for windows of {@code window}
 * each. Only the fixed window counts per period: the sliding algorithms and the buckets spread a quota over a
 * window's length, which a calendar period does not keep.
 */
public record RateLimitPolicy(String name, Algorithm algorithm, long limit, Duration window, long burst, long cost,
		long delayAfter, Duration maxWait, Duration penalty, @Nullable CalendarWindow calendar) {

	private static final Pattern NAME = Pattern.compile("[A-Za-z0-9._:-]{1,100}");

	/** The largest integer that a double, and so a Redis Lua number, holds exactly: 2^53. */
	private static final long MAX_EXACT = 1L << 53;

	private static final long MAX_SLIDING_LOG_LIMIT = 100_000;

	/** The longest penalty: a key refused for longer is better removed from the application altogether. */
	private static final Duration MAX_PENALTY = Duration.ofDays(365);

	private static final Pattern SIMPLE_DURATION = Pattern.compile("(\\d{1,18})\\s*(ms|s|m|h|d)");

	/**
	 * Validates every component.
	 */
	public RateLimitPolicy {
		Objects.requireNonNull(name, "name must not be null");
		Objects.requireNonNull(algorithm, "algorithm must not be null");
		Objects.requireNonNull(window, "window must not be null");
		if (!NAME.matcher(name).matches()) {
			throw new IllegalArgumentException("name '" + name
					+ "' is invalid: use 1 to 100 letters, digits or the characters . _ - :");
		}
		if (limit < 1) {
			throw new IllegalArgumentException("limit of policy '" + name + "' must be at least 1, was " + limit);
		}
		if (window.isNegative() || window.isZero()) {
			throw new IllegalArgumentException("window of policy '" + name + "' must be positive, was " + window);
		}
		if (window.getNano() % 1000 != 0 || window.compareTo(Duration.ofDays(365_000)) > 0) {
			throw new IllegalArgumentException("window of policy '" + name
					+ "' must be a whole number of microseconds of at most 1000 years, was " + window);
		}
		if (burst < 1) {
			throw new IllegalArgumentException("burst of policy '" + name + "' must be at least 1, was " + burst);
		}
		if (!usesBurst(algorithm) && burst != limit) {
			throw new IllegalArgumentException("burst of policy '" + name + "' is " + burst + ", but " + algorithm
					+ " has no burst: its capacity is the limit (" + limit + ")");
		}
		if (cost < 1) {
			throw new IllegalArgumentException("cost of policy '" + name + "' must be at least 1, was " + cost);
		}
		long capacity = usesBurst(algorithm) ? burst : limit;
		if (cost > capacity) {
			throw new IllegalArgumentException("cost of policy '" + name + "' is " + cost
					+ ", more than its capacity of " + capacity + ": no request could ever pass");
		}
		checkExactness(name, algorithm, limit, window, capacity, cost);
		if (delayAfter < 0 || delayAfter > burst) {
			throw new IllegalArgumentException("delayAfter of policy '" + name + "' must be between 0 and burst ("
					+ burst + "), was " + delayAfter);
		}
		if (delayAfter != 0 && algorithm != Algorithm.LEAKY_BUCKET) {
			throw new IllegalArgumentException("delayAfter of policy '" + name + "' is " + delayAfter
					+ ", but only LEAKY_BUCKET delays requests");
		}
		checkMaxWait(name, algorithm, limit, window, capacity, cost, maxWait);
		Objects.requireNonNull(penalty, "penalty must not be null");
		if (penalty.isNegative() || penalty.getNano() % 1000 != 0 || penalty.compareTo(MAX_PENALTY) > 0) {
			throw new IllegalArgumentException("penalty of policy '" + name + "' must be a whole number of "
					+ "microseconds between zero and " + MAX_PENALTY.toDays() + " days, was " + penalty);
		}
		if (calendar != null && algorithm != Algorithm.FIXED_WINDOW) {
			throw new IllegalArgumentException("window of policy '" + name + "' is a " + calendar + ", but only "
					+ "FIXED_WINDOW counts per calendar period; " + algorithm
					+ " spreads its quota over a window's length, which calendar periods do not keep");
		}
		if (calendar != null && !window.equals(calendar.nominalLength())) {
			throw new IllegalArgumentException("window of policy '" + name + "' is " + window + ", but its "
					+ calendar + " is " + calendar.nominalLength() + " long");
		}
	}

	/**
	 * Creates a policy whose windows have the length {@code window} each.
	 * @param name the policy's name
	 * @param algorithm the algorithm
	 * @param limit permits per window
	 * @param window the window
	 * @param burst the burst, or the limit for the window algorithms
	 * @param cost permits each request takes
	 * @param delayAfter leaky bucket only: how many queued requests pass at once
	 * @param maxWait how long a request may wait for its permits
	 * @param penalty how long a refused key stays refused
	 */
	public RateLimitPolicy(String name, Algorithm algorithm, long limit, Duration window, long burst, long cost,
			long delayAfter, Duration maxWait, Duration penalty) {
		this(name, algorithm, limit, window, burst, cost, delayAfter, maxWait, penalty, null);
	}

	/**
	 * Creates a policy whose requests never wait for their permits.
	 * @param name the policy's name
	 * @param algorithm the algorithm
	 * @param limit permits per window
	 * @param window the window
	 * @param burst the burst, or the limit for the window algorithms
	 * @param cost permits each request takes
	 * @param delayAfter leaky bucket only: how many queued requests pass at once
	 */
	public RateLimitPolicy(String name, Algorithm algorithm, long limit, Duration window, long burst, long cost,
			long delayAfter) {
		this(name, algorithm, limit, window, burst, cost, delayAfter, Duration.ZERO, Duration.ZERO);
	}

	/**
	 * Creates a policy of {@code limit} permits per {@code window} with the default burst (the limit), a cost
	 * of one permit per request and no undelayed requests.
	 * @param name the policy's name
	 * @param algorithm the algorithm
	 * @param limit permits per window
	 * @param window the window
	 * @return the policy
	 */
	public static RateLimitPolicy of(String name, Algorithm algorithm, long limit, Duration window) {
		return new RateLimitPolicy(name, algorithm, limit, window, limit, 1, 0);
	}

	/**
	 * Returns a copy of this policy with another burst.
	 * @param burst the burst
	 * @return the new policy
	 */
	public RateLimitPolicy withBurst(long burst) {
		return new RateLimitPolicy(this.name, this.algorithm, this.limit, this.window, burst, this.cost,
				this.delayAfter, this.maxWait, this.penalty, this.calendar);
	}

	/**
	 * Returns a copy of this policy with another cost per request.
	 * @param cost the cost
	 * @return the new policy
	 */
	public RateLimitPolicy withCost(long cost) {
		return new RateLimitPolicy(this.name, this.algorithm, this.limit, this.window, this.burst, cost,
				this.delayAfter, this.maxWait, this.penalty, this.calendar);
	}

	/**
	 * Returns a copy of this policy, a fixed window, whose windows are the periods of {@code calendar}.
	 * @param calendar the calendar
	 * @return the new policy
	 * @throws IllegalArgumentException if the algorithm is not {@link Algorithm#FIXED_WINDOW}
	 */
	public RateLimitPolicy withCalendar(CalendarWindow calendar) {
		return new RateLimitPolicy(this.name, this.algorithm, this.limit, calendar.nominalLength(), this.burst,
				this.cost, this.delayAfter, this.maxWait, this.penalty, calendar);
	}

	/**
	 * Returns a copy of this policy with another limit and window, the burst following the limit where it
	 * was the limit: the policy that another client's quota of the same kind takes.
	 * @param limit permits per window
	 * @param window the window
	 * @return the new policy
	 * @throws IllegalArgumentException if the policy cannot decide that limit and window exactly
	 */
	public RateLimitPolicy withLimit(long limit, Duration window) {
		return withLimit(limit, window, (this.burst == this.limit) ? limit : this.burst);
	}

	/**
	 * Returns a copy of this policy with another limit, window and burst. A leaky bucket that passed its whole
	 * queue at once still does, and one that delayed after some requests delays after at most the new burst; a
	 * calendar window stays one while the window stays its nominal length.
	 * @param limit permits per window
	 * @param window the window
	 * @param burst the burst, or the limit for the window algorithms
	 * @return the new policy
	 * @throws IllegalArgumentException if the policy cannot decide those values exactly
	 */
	public RateLimitPolicy withLimit(long limit, Duration window, long burst) {
		long delayAfter = (this.delayAfter == this.burst) ? burst : Math.min(this.delayAfter, burst);
		CalendarWindow calendar = window.equals(this.window) ? this.calendar : null;
		return new RateLimitPolicy(this.name, this.algorithm, limit, window, burst, this.cost, delayAfter,
				this.maxWait, this.penalty, calendar);
	}

	/**
	 * Returns a copy of this policy where the first {@code delayAfter} queued requests pass at once.
	 * @param delayAfter how many queued requests pass without waiting
	 * @return the new policy
	 */
	public RateLimitPolicy withDelayAfter(long delayAfter) {
		return new RateLimitPolicy(this.name, this.algorithm, this.limit, this.window, this.burst, this.cost,
				delayAfter, this.maxWait, this.penalty, this.calendar);
	}

	/**
	 * Returns a copy of this policy whose requests wait up to {@code maxWait} for their permits, reserving them,
	 * rather than being refused: GCRA and the token bucket only.
	 * @param maxWait how long a request may wait, at most the window
	 * @return the new policy
	 * @throws IllegalArgumentException if the algorithm cannot reserve permits, or {@code maxWait} is negative or
	 * longer than the window
	 */
	public RateLimitPolicy withMaxWait(Duration maxWait) {
		return new RateLimitPolicy(this.name, this.algorithm, this.limit, this.window, this.burst, this.cost,
				this.delayAfter, maxWait, this.penalty, this.calendar);
	}

	/**
	 * Returns the policy whose state every request of this policy shares, whatever it costs and however long it
	 * may wait: this one at a cost of one permit, never waiting.
	 * @return the policy of the shared state
	 */
	public RateLimitPolicy shared() {
		return (this.cost == 1 && this.maxWait.isZero()) ? this
				: new RateLimitPolicy(this.name, this.algorithm, this.limit, this.window, this.burst, 1,
						this.delayAfter, Duration.ZERO, this.penalty, this.calendar);
	}

	/**
	 * Returns how long a request may wait for its permits, in microseconds.
	 * @return the longest wait in microseconds
	 */
	public long maxWaitMicros() {
		return micros(this.maxWait);
	}

	/**
	 * Returns a copy of this policy that refuses a key for {@code penalty} once it refused one of its requests.
	 * @param penalty how long a refused key stays refused, zero for none
	 * @return the new policy
	 * @throws IllegalArgumentException if {@code penalty} is negative, not a whole number of microseconds, or
	 * longer than a year
	 */
	public RateLimitPolicy withPenalty(Duration penalty) {
		return new RateLimitPolicy(this.name, this.algorithm, this.limit, this.window, this.burst, this.cost,
				this.delayAfter, this.maxWait, penalty, this.calendar);
	}

	/**
	 * Returns how long a refused key stays refused, in microseconds.
	 * @return the penalty in microseconds
	 */
	public long penaltyMicros() {
		return micros(this.penalty);
	}

	/**
	 * Returns the longest a key that stops sending takes to be back to its full quota: the window for the fixed
	 * window (the longest period of a calendar's) and the sliding log, two windows for the sliding window counter
	 * (the previous window weighs on the current one), and for the bucket algorithms the time the burst takes to
	 * refill, {@code burst x window / limit}, rounded up to the microsecond.
	 * @return the time until any key is full again
	 */
	public Duration fullAfter() {
		if (this.calendar != null) {
			return this.calendar.longestPeriod();
		}
		long micros = switch (this.algorithm) {
			case FIXED_WINDOW, SLIDING_LOG -> windowMicros();
			case SLIDING_WINDOW_COUNTER -> 2 * windowMicros();
			case TOKEN_BUCKET, LEAKY_BUCKET, GCRA -> BigInteger.valueOf(this.burst)
				.multiply(BigInteger.valueOf(windowMicros()))
				.add(BigInteger.valueOf(this.limit - 1))
				.divide(BigInteger.valueOf(this.limit))
				.longValueExact();
		};
		return Duration.of(micros, ChronoUnit.MICROS);
	}

	/**
	 * Returns how many permits a key may hold at once: the burst for the bucket algorithms, the limit for the
	 * window algorithms.
	 * @return the capacity
	 */
	public long capacity() {
		return usesBurst(this.algorithm) ? this.burst : this.limit;
	}

	/**
	 * Parses a window or any other duration as written in annotations, properties and on the command line:
	 * {@code 500ms}, {@code 10s}, {@code 1m}, {@code 1h}, {@code 1d}, or ISO-8601 such as {@code PT10S}.
	 * @param text the text to parse
	 * @return the duration
	 * @throws IllegalArgumentException naming the text if it is not a duration
	 */
	public static Duration parseWindow(String text) {
		String trimmed = text.trim();
		Matcher simple = SIMPLE_DURATION.matcher(trimmed.toLowerCase(Locale.ROOT));
		if (simple.matches()) {
			long amount = Long.parseLong(simple.group(1));
			return switch (simple.group(2)) {
				case "ms" -> Duration.ofMillis(amount);
				case "s" -> Duration.ofSeconds(amount);
				case "m" -> Duration.ofMinutes(amount);
				case "h" -> Duration.ofHours(amount);
				default -> Duration.ofDays(amount);
			};
		}
		if (trimmed.length() > 1 && (trimmed.charAt(0) == 'P' || trimmed.charAt(0) == 'p')) {
			try {
				return Duration.parse(trimmed);
			}
			catch (DateTimeParseException ex) {
				// reported below with the accepted forms
			}
		}
		throw new IllegalArgumentException("'" + text
				+ "' is not a duration: use a whole number with ms, s, m, h or d (500ms, 10s, 1m, 1h, 1d) or ISO-8601 (PT10S)");
	}

	/**
	 * Returns the length of the window in microseconds, the unit in which every store computes.
	 * @return the window in microseconds
	 */
	public long windowMicros() {
		return micros(this.window);
	}

	private static long micros(Duration duration) {
		return duration.getSeconds() * 1_000_000L + duration.getNano() / 1000;
	}

	/**
	 * Every store computes on integers of at most 53 bits, so that the same arithmetic runs exactly in Java
	 * and in Redis' Lua, whose numbers are doubles. This rejects the few policies whose state would not fit.
	 */
	private static void checkExactness(String name, Algorithm algorithm, long limit, Duration window, long capacity,
			long cost) {
		long windowMicros = micros(window);
		String problem = switch (algorithm) {
			case FIXED_WINDOW -> null;
			case SLIDING_LOG -> (limit > MAX_SLIDING_LOG_LIMIT)
					? "SLIDING_LOG keeps one timestamp per permit, so its limit is at most " + MAX_SLIDING_LOG_LIMIT
					: null;
			case SLIDING_WINDOW_COUNTER -> fitsExactly(limit, windowMicros) ? null
					: "SLIDING_WINDOW_COUNTER needs limit x window in microseconds below 2^53";
			case TOKEN_BUCKET, LEAKY_BUCKET, GCRA -> fitsExactly(capacity + cost, interval(windowMicros, limit))
					? null : algorithm + " needs (burst + cost) x window / limit below 2^53 microseconds";
		};
		if (problem != null) {
			throw new IllegalArgumentException("policy '" + name + "' (" + limit + " per " + window + ") is too large: "
					+ problem + "; use a shorter window with a proportionally smaller limit");
		}
	}

	/**
	 * A wait is a reservation, which only the bucket algorithms make: their one instant moves on past the
	 * burst, and the requests after it queue behind. A window counts what it admitted, and has nowhere to put
	 * a permit of a window to come; the leaky bucket queues requests itself ({@code delayAfter}). At most a
	 * window, the arithmetic of the instant stays exact with the farthest reservation.
	 */
	private static void checkMaxWait(String name, Algorithm algorithm, long limit, Duration window, long capacity,
			long cost, Duration maxWait) {
		Objects.requireNonNull(maxWait, "maxWait must not be null");
		if (maxWait.isZero()) {
			return;
		}
		String problem = null;
		if (algorithm != Algorithm.GCRA && algorithm != Algorithm.TOKEN_BUCKET) {
			problem = "only GCRA and TOKEN_BUCKET reserve permits for a request that waits; " + algorithm
					+ ((algorithm == Algorithm.LEAKY_BUCKET) ? " queues requests through delayAfter"
							: " counts a window and cannot take a permit of a window to come");
		}
		else if (maxWait.isNegative() || maxWait.getNano() % 1000 != 0 || maxWait.compareTo(window) > 0) {
			problem = "it must be a whole number of microseconds between zero and the window (" + window + ")";
		}
		else if (!fitsExactly(capacity + cost + limit, interval(micros(window), limit))) {
			problem = algorithm + " needs (burst + cost + limit) x window / limit below 2^53 microseconds to wait";
		}
		if (problem != null) {
			throw new IllegalArgumentException("maxWait of policy '" + name + "' is " + maxWait + ", but " + problem);
		}
	}

	/** The emission interval {@code window / limit} in ticks of {@code 1 / scale} microsecond, as the stores count. */
	private static long interval(long windowMicros, long limit) {
		return windowMicros / BigInteger.valueOf(windowMicros).gcd(BigInteger.valueOf(limit)).longValue();
	}

	private static boolean fitsExactly(long a, long b) {
		return Math.multiplyHigh(a, b) == 0 && a * b >= 0 && a * b <= MAX_EXACT;
	}

	private static boolean usesBurst(Algorithm algorithm) {
		return switch (algorithm) {
			case TOKEN_BUCKET, LEAKY_BUCKET, GCRA -> true;
			case FIXED_WINDOW, SLIDING_LOG, SLIDING_WINDOW_COUNTER -> false;
		};
	}

}
