package dev.ratelimit.core;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * Decisions of the reference implementations on one trace, written by
 * {@code src/test/python/make_reference_fixtures.py}.
 *
 * @param name the fixture's name
 * @param limit the limit
 * @param window the window
 * @param burst the burst of the token bucket, the leaky bucket and GCRA
 * @param rows the expected rows of each algorithm, in trace order
 */
public record ReferenceFixture(String name, long limit, Duration window, long burst,
		Map<Algorithm, List<Row>> rows) {

	private static final List<String> NAMES = List.of("scenario-a", "scenario-b", "random-00", "random-01",
			"random-02", "random-03", "random-04", "random-05", "random-06", "random-07", "random-08", "random-09");

	/**
	 * Returns every fixture.
	 * @return the fixtures
	 */
	public static Stream<ReferenceFixture> all() {
		return NAMES.stream().map(ReferenceFixture::load);
	}

	/**
	 * Loads one fixture.
	 * @param name the fixture's name
	 * @return the fixture
	 */
	public static ReferenceFixture load(String name) {
		String resource = "/reference/" + name + ".csv";
		try (InputStream in = ReferenceFixture.class.getResourceAsStream(resource)) {
			if (in == null) {
				throw new IllegalStateException("Missing fixture " + resource);
			}
			BufferedReader reader = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
			Map<String, String> header = new java.util.HashMap<>();
			for (String part : reader.readLine().substring(1).trim().split(" ")) {
				String[] pair = part.split("=");
				header.put(pair[0], pair[1]);
			}
			reader.readLine();
			Map<Algorithm, List<Row>> rows = new EnumMap<>(Algorithm.class);
			for (String line = reader.readLine(); line != null; line = reader.readLine()) {
				String[] cells = line.split(",");
				rows.computeIfAbsent(Algorithm.valueOf(cells[0]), (a) -> new ArrayList<>())
					.add(new Row(cells[1], nanos(cells[1]), cells[2], Boolean.parseBoolean(cells[3]),
							Long.parseLong(cells[4])));
			}
			return new ReferenceFixture(name, Long.parseLong(header.get("limit")),
					Duration.ofNanos(nanos(header.get("window"))), Long.parseLong(header.get("burst")), rows);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	/**
	 * Returns the policy of this fixture for one algorithm.
	 * @param algorithm the algorithm
	 * @return the policy
	 */
	public RateLimitPolicy policy(Algorithm algorithm) {
		RateLimitPolicy policy = RateLimitPolicy.of("reference", algorithm, this.limit, this.window);
		return switch (algorithm) {
			case TOKEN_BUCKET, LEAKY_BUCKET, GCRA -> policy.withBurst(this.burst);
			default -> policy;
		};
	}

	@Override
	public String toString() {
		return this.name + " (" + this.limit + " per " + this.window + ", burst " + this.burst + ")";
	}

	static long nanos(String seconds) {
		return new BigDecimal(seconds).movePointRight(9).longValueExact();
	}

	/**
	 * One request and the reference's decision.
	 *
	 * @param time the time as written in the trace, in seconds
	 * @param nanos the time in nanoseconds
	 * @param key the key
	 * @param allowed whether the reference allowed it
	 * @param delayNanos the leaky bucket's wait, rounded up to a nanosecond
	 */
	public record Row(String time, long nanos, String key, boolean allowed, long delayNanos) {
	}

}
