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
			String algorithmPart = standalone.substring(0, standalone.indexOf(RedisScripts.ENTRY_POINT));
			assertThat(stacked).contains(algorithmPart)
				.contains("algorithms['" + RedisScripts.fileName(algorithm) + "'] = algorithm");
		}
		assertThat(stacked).doesNotContain(RedisScripts.ENTRY_POINT);
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void producesEachStandaloneScriptFromItsPiecesExactly(Algorithm algorithm) {
		String expected = piecesOf(algorithm) + piece("time.lua") + piece("entry.lua");
		assertThat(RedisScripts.get().standalone(algorithm).source()).isEqualTo(expected);
	}

	@Test
	void producesTheStackedScriptFromThePiecesExactly() {
		StringBuilder expected = new StringBuilder("-- Generated from the six algorithm scripts, time.lua and stacked.lua: "
				+ "see stacked.lua\n\nlocal algorithms = {}\n\nlocal define = {\n");
		for (Algorithm algorithm : Algorithm.values()) {
			String name = RedisScripts.fileName(algorithm);
			expected.append("\n['" + name + "'] = function()\n")
				.append(piecesOf(algorithm))
				.append("algorithms['" + name + "'] = algorithm\nend,\n");
		}
		expected.append("}\n");
		String time = piece("time.lua");
		expected.append(time.substring(time.indexOf('\n') + 1)).append('\n').append(piece("stacked.lua"));
		assertThat(RedisScripts.get().stacked().source()).isEqualTo(expected.toString());
	}

	@Test
	void shipsTheFleetScriptAsWritten() {
		assertThat(RedisScripts.get().fleet().source()).isEqualTo(piece("fleet.lua"));
	}

	@Test
	void loadsTheScriptsOnce() {
		assertThat(RedisScripts.get()).isSameAs(RedisScripts.get());
	}

	/** The helpers and the algorithm's own pieces, in the order the build's {@code lua-scripts} lists them. */
	private static String piecesOf(Algorithm algorithm) {
		List<String> pieces = switch (algorithm) {
			case FIXED_WINDOW -> List.of("windows.lua", "fixed-window.lua");
			case SLIDING_LOG -> List.of("sliding-log.lua");
			case SLIDING_WINDOW_COUNTER -> List.of("windows.lua", "sliding-window-counter.lua");
			case TOKEN_BUCKET -> List.of("ticks.lua", "token-bucket.lua", "bucket.lua");
			case LEAKY_BUCKET -> List.of("ticks.lua", "leaky-bucket.lua");
			case GCRA -> List.of("ticks.lua", "gcra.lua", "bucket.lua");
		};
		StringBuilder text = new StringBuilder(piece("helpers.lua"));
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
