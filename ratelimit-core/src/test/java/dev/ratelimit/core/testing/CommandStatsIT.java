package dev.ratelimit.core.testing;

import io.lettuce.core.RedisClient;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A real Redis counts what a script runs under the script's command and under each command it calls. The
 * server is this test's own: the counts are the whole server's, and other tests' stores send heartbeats.
 */
class CommandStatsIT {

	@Test
	void countsAScriptAndTheCommandsItRuns() {
		if (!RedisServerProcess.isAvailable()) {
			TestRedis.skipOrFail("there is no redis-server on the PATH to count commands on alone");
		}
		try (RedisServerProcess server = RedisServerProcess.start();
				RedisClient client = RedisClient.create(server.uri());
				StatefulRedisConnection<String, String> connection = client.connect()) {
			RedisCommands<String, String> commands = connection.sync();
			CommandStats before = CommandStats.read(commands);
			commands.eval("redis.call('SET', KEYS[1], 'x'); return redis.call('RPUSH', KEYS[1] .. ':list', 'y')",
					ScriptOutputType.INTEGER, "stats");
			CommandStats ran = CommandStats.read(commands).since(before);
			assertThat(ran.calls("eval")).isEqualTo(1);
			assertThat(ran.calls("set")).isEqualTo(1);
			assertThat(ran.calls("rpush")).isEqualTo(1);
			assertThat(ran.calls("evalsha")).isZero();
		}
	}

}
