package dev.ratelimit.core.redis;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.HexFormat;

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

	@Test
	void loadsTheScriptsOnce() {
		assertThat(RedisScripts.get()).isSameAs(RedisScripts.get());
	}

}
