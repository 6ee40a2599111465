package dev.ratelimit.core.memory;

import dev.ratelimit.core.ManualTimeSource;
import dev.ratelimit.core.RateLimitStore;
import dev.ratelimit.core.StoreContractTests;
import dev.ratelimit.core.testing.AwaitingAsyncStore;

/**
 * The store contract, every decision and give-back made through the in-memory store's asynchronous methods.
 */
class InMemoryAsyncStoreContractTests extends StoreContractTests {

	@Override
	protected RateLimitStore createStore(ManualTimeSource clock) {
		return new AwaitingAsyncStore(InMemoryRateLimitStore.builder().timeSource(clock).build());
	}

}
