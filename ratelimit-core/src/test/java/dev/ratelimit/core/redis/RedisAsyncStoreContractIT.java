package dev.ratelimit.core.redis;

import dev.ratelimit.core.ManualTimeSource;
import dev.ratelimit.core.RateLimitStore;
import dev.ratelimit.core.testing.AwaitingAsyncStore;

/**
 * The store contract on a real Redis, every decision and give-back made through the asynchronous methods: their
 * calls chained on Lettuce's replies instead of waited for, the same decisions.
 */
class RedisAsyncStoreContractIT extends RedisStoreContractIT {

	@Override
	protected RateLimitStore createStore(ManualTimeSource clock) {
		return new AwaitingAsyncStore(super.createStore(clock));
	}

}
