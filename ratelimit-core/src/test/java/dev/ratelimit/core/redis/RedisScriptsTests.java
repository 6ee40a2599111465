package dev.ratelimit.core.redis;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import dev.ratelimit.core.Algorithm;

import static org.assertj.core.api.Assertions.assertThat;

class RedisScriptsTests {

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void readsEachAlgorithmsScriptWithItsDigest(Algorithm algorithm) throws Exception {
		RedisScripts.Script script = RedisScripts.get().standalone(algorithm);
		assertThat(script.source()).contains("KEYS[1]").contains(RedisScripts.ENTRY_POINT);
		byte[] digest = MessageDigest.getInstance("SHA-1").digest(script.source().getBytes(StandardCharsets.UTF_8));
		assertThat(script.sha1()).isEqualTo(HexFormat.of().formatHex(digest)).hasSize(40);
	}

	@Test
	void buildsTheStackedScriptFromTheAlgorithmsOwnCode() {
		String stacked = RedisScripts.get().stacked().source();
		for (Algorithm algorithm : Algorithm.values()) {
			String standalone = RedisScripts.get().standalone(algorithm).source();
			String decision = standalone.substring(standalone.indexOf(RedisScripts.SECTIONS.get(0)));
			assertThat(stacked).contains(decision.substring(0, decision.indexOf(RedisScripts.SECTIONS.get(1))))
				.contains("['" + RedisScripts.fileName(algorithm) + "'] = function()");
		}
		assertThat(stacked).doesNotContain(RedisScripts.ENTRY_POINT).doesNotContain(RedisScripts.ALGORITHM);
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void producesEachStandaloneScriptFromItsPiecesExactly(Algorithm algorithm) {
		String expected = piece("helpers.lua") + piece("time.lua") + piece("entry.lua") + piecesOf(algorithm);
		assertThat(RedisScripts.get().standalone(algorithm).source()).isEqualTo(expected);
	}

	@Test
	void producesTheStackedScriptFromThePiecesExactly() {
		StringBuilder expected = new StringBuilder("-- Generated from the six algorithm scripts and stacked.lua: "
				+ "see stacked.lua\n\n" + piece("helpers.lua") + piece("time.lua")
				+ "local algorithms = {}\n\nlocal define = {\n");
		for (Algorithm algorithm : Algorithm.values()) {
			String pieces = piecesOf(algorithm);
			int decision = pieces.indexOf(RedisScripts.SECTIONS.get(0));
			int take = pieces.indexOf(RedisScripts.SECTIONS.get(1));
			expected.append("\n['" + RedisScripts.fileName(algorithm) + "'] = function()\n")
				.append(pieces, 0, decision)
				.append("return function(key, limit, window, burst, cost, shaping, now)\n")
				.append(pieces, decision, take)
				.append("return allowed, function(allowed)\n")
				.append(pieces.substring(take))
				.append("end\nend\nend,\n");
		}
		expected.append("}\n\n").append(piece("decider.lua"));
		assertThat(RedisScripts.get().stacked().source()).isEqualTo(expected + "\n" + piece("stacked.lua"));
		assertThat(RedisScripts.get().carryOver().source())
			.isEqualTo(expected.toString()
				.replace("Generated from the six algorithm scripts and stacked.lua: see stacked.lua",
						"Generated from the six algorithm scripts and carry-over.lua: see carry-over.lua")
					+ piece("release.lua") + "\n" + piece("carry-over.lua"));
	}

	@Test
	void producesTheResetScriptsFromTheHelpersAndTheRelease() {
		for (String reset : List.of("reset", "reset-all")) {
			RedisScripts.Script script = reset.equals("reset") ? RedisScripts.get().reset()
					: RedisScripts.get().resetAll();
			assertThat(script.source()).isEqualTo("-- Generated from the standalone scripts' helpers and " + reset
					+ ".lua: see " + reset + ".lua\n\n" + piece("helpers.lua") + piece("time.lua") + piece("release.lua")
					+ "\n" + piece(reset + ".lua"));
		}
	}

	@Test
	void producesTheGiveBackScriptFromThePiecesExactly() {
		StringBuilder expected = new StringBuilder("-- Generated from the six algorithm scripts and give-back.lua: "
				+ "see give-back.lua\n\n" + piece("helpers.lua") + piece("time.lua") + "local give_back = {\n");
		for (Algorithm algorithm : Algorithm.values()) {
			String pieces = piecesOf(algorithm);
			String giveBack = switch (algorithm) {
				case FIXED_WINDOW -> "give-back-fixed-window.lua";
				case SLIDING_LOG -> "give-back-sliding-log.lua";
				case SLIDING_WINDOW_COUNTER -> "give-back-sliding-window-counter.lua";
				case TOKEN_BUCKET, LEAKY_BUCKET, GCRA -> "give-back-bucket.lua";
			};
			expected.append("\n['" + RedisScripts.fileName(algorithm) + "'] = function(key, limit, window, burst, cost, now, "
					+ "taken_at)\n")
				.append(pieces, 0, pieces.indexOf(RedisScripts.SECTIONS.get(0)))
				.append(piece(giveBack))
				.append("end,\n");
		}
		expected.append("}\n").append(piece("release.lua")).append("\n").append(piece("give-back.lua"));
		assertThat(RedisScripts.get().giveBack().source()).isEqualTo(expected.toString());
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void keepsEachDecisionStraightLineOverLocals(Algorithm algorithm) {
		// every line runs on every call: a decision builds no state table and no algorithm table
		String pieces = piecesOf(algorithm);
		assertThat(pieces).doesNotContain("local s = {").doesNotContain("local algorithm = {");
		String decision = pieces.substring(pieces.indexOf(RedisScripts.SECTIONS.get(0)));
		assertThat(decision).doesNotContain("local function");
	}

	@Test
	void shipsTheFleetScriptAsWritten() {
		assertThat(RedisScripts.get().fleet().source()).isEqualTo(piece("fleet.lua"));
	}

	@Test
	void loadsTheScriptsOnce() {
		assertThat(RedisScripts.get()).isSameAs(RedisScripts.get());
	}

	/** The algorithm's own pieces, in the order the build's {@code lua-scripts} lists them. */
	private static String piecesOf(Algorithm algorithm) {
		List<String> pieces = switch (algorithm) {
			case FIXED_WINDOW -> List.of("windows.lua", "fixed-window.lua");
			case SLIDING_LOG -> List.of("sliding-log.lua");
			case SLIDING_WINDOW_COUNTER -> List.of("windows.lua", "sliding-window-counter.lua");
			case TOKEN_BUCKET -> List.of("ticks.lua", "token-bucket.lua", "bucket.lua");
			case LEAKY_BUCKET -> List.of("ticks.lua", "leaky-bucket.lua");
			case GCRA -> List.of("ticks.lua", "gcra.lua", "bucket.lua");
		};
		StringBuilder text = new StringBuilder();
		pieces.forEach((name) -> text.append(piece(name)));
		return text.toString();
	}

	/** A piece as the build concatenates it: as written in src/main/lua, ending with a line break. */
	private static String piece(String name) {
		try {
			String text = Files.readString(Path.of("src/main/lua", name), StandardCharsets.UTF_8);
			return text.endsWith("\n") ? text : text + "\n";
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

}
