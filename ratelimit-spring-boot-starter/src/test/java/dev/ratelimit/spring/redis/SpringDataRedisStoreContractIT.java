package dev.ratelimit.spring.redis;

import org.springframework.data.redis.connection.RedisConfiguration;

/**
 * The store contract on a real Redis reached through Spring Data Redis on Lettuce.
 */
class SpringDataRedisStoreContractIT extends AbstractExecutorStoreContractIT {

	@Override
	AbstractScriptExecutorIT.Connection connect(RedisConfiguration configuration) {
		return SpringDataRedisScriptExecutorIT.open(configuration);
	}

}
