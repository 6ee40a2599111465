package dev.ratelimit.core.memory;

import dev.ratelimit.core.ManualTimeSource;
import dev.ratelimit.core.RateLimitStore;
import dev.ratelimit.core.StoreContractTests;

class InMemoryStoreContractTests extends StoreContractTests {

	@Override
	protected RateLimitStore createStore(ManualTimeSource clock) {
		return InMemoryRateLimitStore.builder().timeSource(clock).build();
	}

}
