package dev.ratelimit.core.redis;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.EnumMap;
import java.util.HexFormat;
import java.util.Map;

import dev.ratelimit.core.Algorithm;

/**
 * The Lua scripts, read once from {@code META-INF/ratelimit/lua/}, where the build puts them together from the
 * pieces in {@code src/main/lua}: one per algorithm (its part, {@code time.lua} and {@code entry.lua}), the
 * stacked script generated from the algorithms' parts, {@code time.lua} and {@code stacked.lua}, and the fleet's
 * heartbeat.
 */
final class RedisScripts {

	static final String LOCATION = "META-INF/ratelimit/lua/";

	/** The line above which each algorithm script holds its algorithm and below which its standalone entry. */
	static final String ENTRY_POINT = "-- === entry point";

	private static final RedisScripts INSTANCE = new RedisScripts();

	private final Map<Algorithm, Script> standalone = new EnumMap<>(Algorithm.class);

	private final Script stacked;

	private final Script fleet = new Script(read("fleet.lua"));

	private RedisScripts() {
		// Each algorithm's part is wrapped in a function that the driver calls only for the algorithms a call names:
		// every line of a script runs on every call, so defining all six would cost each call their closures.
		StringBuilder stacked = new StringBuilder("-- Generated from the six algorithm scripts, time.lua and stacked.lua: "
				+ "see stacked.lua\n\nlocal algorithms = {}\n\nlocal define = {\n");
		for (Algorithm algorithm : Algorithm.values()) {
			String source = read(fileName(algorithm) + ".lua");
			this.standalone.put(algorithm, new Script(source));
			int entryPoint = source.indexOf("\n" + ENTRY_POINT);
			if (entryPoint < 0) {
				throw new IllegalStateException(fileName(algorithm) + ".lua has no '" + ENTRY_POINT + "' line");
			}
			stacked.append("\n['")
				.append(fileName(algorithm))
				.append("'] = function()\n")
				.append(source, 0, entryPoint + 1)
				.append("algorithms['")
				.append(fileName(algorithm))
				.append("'] = algorithm\nend,\n");
		}
		stacked.append("}\n");
		String time = read("time.lua");
		// below the entry point line, which it starts with, time.lua holds what every entry shares
		stacked.append(time, time.indexOf('\n') + 1, time.length()).append('\n').append(read("stacked.lua"));
		this.stacked = new Script(stacked.toString());
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

	Script fleet() {
		return this.fleet;
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
