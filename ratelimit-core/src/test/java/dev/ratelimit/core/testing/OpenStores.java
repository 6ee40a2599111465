package dev.ratelimit.core.testing;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import dev.ratelimit.core.redis.RedisRateLimitStore;

/**
 * The Redis stores a test class opened, to close after each test: a store's heartbeat would otherwise go on,
 * once a second, for the rest of the run.
 */
public final class OpenStores {

	private final List<RedisRateLimitStore> open = new CopyOnWriteArrayList<>();

	/**
	 * Keeps the store to close it later.
	 * @param store the store
	 * @return the store
	 */
	public RedisRateLimitStore track(RedisRateLimitStore store) {
		this.open.add(store);
		return store;
	}

	/**
	 * Closes every store tracked so far.
	 */
	public void closeAll() {
		this.open.forEach(RedisRateLimitStore::close);
		this.open.clear();
	}

}
