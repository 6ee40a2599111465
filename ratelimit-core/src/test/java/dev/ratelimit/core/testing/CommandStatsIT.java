package dev.ratelimit.core.testing;

import java.util.concurrent.ThreadLocalRandom;

import io.lettuce.core.ScriptOutputType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A real Redis counts what a script runs under the script's command and under each command it calls.
 */
@ExtendWith(RedisExtension.class)
class CommandStatsIT {

	@Test
	void countsAScriptAndTheCommandsItRuns(TestRedis redis) {
		String key = "stats:" + ThreadLocalRandom.current().nextLong();
		CommandStats before = CommandStats.read(redis.commands());
		redis.commands().eval("redis.call('SET', KEYS[1], 'x'); return redis.call('RPUSH', KEYS[1] .. ':list', 'y')",
				ScriptOutputType.INTEGER, key);
		CommandStats ran = CommandStats.read(redis.commands()).since(before);
		assertThat(ran.calls("eval")).isEqualTo(1);
		assertThat(ran.calls("set")).isEqualTo(1);
		assertThat(ran.calls("rpush")).isEqualTo(1);
		assertThat(ran.calls("evalsha")).isZero();
	}

}
