package dev.ratelimit.spring.redis;

import org.springframework.data.redis.connection.RedisConfiguration;

/**
 * The store contract on a real Redis reached through Jedis, each decision on the caller's thread.
 */
class JedisStoreContractIT extends AbstractExecutorStoreContractIT {

	@Override
	AbstractScriptExecutorIT.Connection connect(RedisConfiguration configuration) {
		return JedisScriptExecutorIT.open(configuration);
	}

}
