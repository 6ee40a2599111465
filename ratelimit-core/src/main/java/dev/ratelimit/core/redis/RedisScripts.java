package dev.ratelimit.core.redis;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.EnumMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;

import dev.ratelimit.core.Algorithm;

/**
 * The Lua scripts, read once from {@code META-INF/ratelimit/lua/}, where the build puts them together from the
 * pieces in {@code src/main/lua}: one per algorithm (the helpers, {@code time.lua}, {@code entry.lua} and the
 * algorithm's pieces), the stacked script generated here from the same text and {@code stacked.lua}, the
 * give-back script generated likewise from the algorithms' functions, their give-back pieces and
 * {@code give-back.lua}, the carry-over script generated like the stacked one with {@code carry-over.lua}, the
 * fleet's heartbeat and control, and the resets of one client and of every client, after the helpers. The
 * give-back, carry-over and reset scripts also hold {@code release.lua}, as they delete states on purpose.
 */
final class RedisScripts {

	static final String LOCATION = "META-INF/ratelimit/lua/";

	/** The line above which each algorithm script holds what every script shares, and below it its entry. */
	static final String ENTRY_POINT = "-- === entry point";

	/** The line below which each algorithm script holds its algorithm: its functions, then its decision. */
	static final String ALGORITHM = "-- === algorithm";

	/** The lines that start the decision's three sections, in their order. */
	static final List<String> SECTIONS = List.of("-- === decision", "-- === take", "-- === reply");

	/** The line that starts each give-back piece. */
	static final String GIVE_BACK = "-- === give back";

	private static final RedisScripts INSTANCE = new RedisScripts();

	private final Map<Algorithm, Script> standalone = new EnumMap<>(Algorithm.class);

	private final Script stacked;

	private final Script giveBack;

	private final Script carryOver;

	private final Script fleet = new Script(read("fleet.lua"));

	private final Script control = new Script(read("control.lua"));

	private final Script reset;

	private final Script resetAll;

	private final Script inFlight;

	private RedisScripts() {
		String shared = null;
		// Each algorithm's part is wrapped in a function that the driver calls only for the algorithms a call names:
		// every line of a script runs on every call, so defining all six would cost each call their closures.
		StringBuilder define = new StringBuilder("local algorithms = {}\n\nlocal define = {\n");
		// a give-back is rare: each defines its algorithm's functions when it runs
		StringBuilder giveBack = new StringBuilder("local give_back = {\n");
		for (Algorithm algorithm : Algorithm.values()) {
			String name = fileName(algorithm);
			String source = read(name + ".lua");
			this.standalone.put(algorithm, new Script(source));
			String prefix = source.substring(0, at(source, ENTRY_POINT, name));
			if (shared != null && !shared.equals(prefix)) {
				throw new IllegalStateException(name + ".lua does not share the helpers of the other scripts");
			}
			shared = prefix;
			int part = source.indexOf('\n', at(source, ALGORITHM, name)) + 1;
			int decision = at(source, SECTIONS.get(0), name);
			int take = at(source, SECTIONS.get(1), name);
			if (!(part <= decision && decision < take && take < at(source, SECTIONS.get(2), name))) {
				throw new IllegalStateException(name + ".lua does not hold its sections in the order " + SECTIONS);
			}
			define.append("\n['")
				.append(name)
				.append("'] = function()\n")
				.append(source, part, decision)
				.append("return function(key, limit, window, burst, cost, shaping, now)\n")
				.append(source, decision, take)
				.append("return allowed, function(allowed)\n")
				.append(source, take, source.length())
				.append("end\nend\nend,\n");
			String piece = read(giveBackPiece(algorithm) + ".lua");
			if (!piece.startsWith(GIVE_BACK)) {
				throw new IllegalStateException(giveBackPiece(algorithm) + ".lua does not start with '" + GIVE_BACK + "'");
			}
			giveBack.append("\n['")
				.append(name)
				.append("'] = function(key, limit, window, burst, cost, now, taken_at)\n")
				.append(source, part, decision)
				.append(piece)
				.append("end,\n");
		}
		define.append("}\n\n").append(read("decider.lua"));
		giveBack.append("}\n");
		String release = read("release.lua");
		this.giveBack = new Script("-- Generated from the six algorithm scripts and give-back.lua: see give-back.lua\n\n"
				+ shared + giveBack + release + "\n" + read("give-back.lua"));
		this.stacked = new Script("-- Generated from the six algorithm scripts and stacked.lua: see stacked.lua\n\n"
				+ shared + define + "\n" + read("stacked.lua"));
		this.carryOver = new Script(
				"-- Generated from the six algorithm scripts and carry-over.lua: see carry-over.lua\n\n" + shared
						+ define + release + "\n" + read("carry-over.lua"));
		this.reset = new Script("-- Generated from the standalone scripts' helpers and reset.lua: see reset.lua\n\n"
				+ shared + release + "\n" + read("reset.lua"));
		this.resetAll = new Script(
				"-- Generated from the standalone scripts' helpers and reset-all.lua: see reset-all.lua\n\n" + shared
						+ release + "\n" + read("reset-all.lua"));
		this.inFlight = new Script("-- Generated from the standalone scripts' helpers and in-flight.lua: see "
				+ "in-flight.lua\n\n" + shared + "\n" + read("in-flight.lua"));
	}

	/** Where the line {@code marker} starts in the script {@code name}. */
	private static int at(String source, String marker, String name) {
		int at = source.indexOf("\n" + marker);
		if (at < 0) {
			throw new IllegalStateException(name + ".lua has no '" + marker + "' line");
		}
		return at + 1;
	}

	static RedisScripts get() {
		return INSTANCE;
	}

	Script standalone(Algorithm algorithm) {
		return this.standalone.get(algorithm);
	}

	Script stacked() {
		return this.stacked;
	}

	Script giveBack() {
		return this.giveBack;
	}

	Script carryOver() {
		return this.carryOver;
	}

	Script fleet() {
		return this.fleet;
	}

	Script control() {
		return this.control;
	}

	Script reset() {
		return this.reset;
	}

	Script inFlight() {
		return this.inFlight;
	}

	Script resetAll() {
		return this.resetAll;
	}

	/** The name of the algorithm's script, without {@code .lua}; the stacked script knows them by it. */
	static String fileName(Algorithm algorithm) {
		return switch (algorithm) {
			case FIXED_WINDOW -> "fixed-window";
			case SLIDING_LOG -> "sliding-log";
			case SLIDING_WINDOW_COUNTER -> "sliding-window-counter";
			case TOKEN_BUCKET -> "token-bucket";
			case LEAKY_BUCKET -> "leaky-bucket";
			case GCRA -> "gcra";
		};
	}

	/** The name of the algorithm's give-back piece, without {@code .lua}: the bucket algorithms share one. */
	static String giveBackPiece(Algorithm algorithm) {
		return switch (algorithm) {
			case FIXED_WINDOW, SLIDING_LOG, SLIDING_WINDOW_COUNTER -> "give-back-" + fileName(algorithm);
			case TOKEN_BUCKET, LEAKY_BUCKET, GCRA -> "give-back-bucket";
		};
	}

	private static String read(String name) {
		try (InputStream in = RedisScripts.class.getClassLoader().getResourceAsStream(LOCATION + name)) {
			if (in == null) {
				throw new IllegalStateException("Missing script " + LOCATION + name);
			}
			return new String(in.readAllBytes(), StandardCharsets.UTF_8);
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Cannot read script " + LOCATION + name, ex);
		}
	}

	/** A script's source and the SHA-1 digest Redis knows it by. */
	record Script(String source, String sha1) {

		Script(String source) {
			this(source, sha1(source));
		}

		private static String sha1(String source) {
			try {
				MessageDigest digest = MessageDigest.getInstance("SHA-1");
				return HexFormat.of().formatHex(digest.digest(source.getBytes(StandardCharsets.UTF_8)));
			}
			catch (NoSuchAlgorithmException ex) {
				throw new IllegalStateException("SHA-1 is required of every Java platform", ex);
			}
		}

	}

}
