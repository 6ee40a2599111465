package dev.ratelimit.core.testing;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The Redis or PostgreSQL stores a test class opened, to close after each test: a store's heartbeat would
 * otherwise go on, once a second, for the rest of the run.
 */
public final class OpenStores {

	private final List<AutoCloseable> open = new CopyOnWriteArrayList<>();

	/**
	 * Keeps the store to close it later.
	 * @param <S> the type of the store
	 * @param store the store
	 * @return the store
	 */
	public <S extends AutoCloseable> S track(S store) {
		this.open.add(store);
		return store;
	}

	/**
	 * Closes every store tracked so far.
	 */
	public void closeAll() {
		for (AutoCloseable store : this.open) {
			try {
				store.close();
			}
			catch (Exception ex) {
				throw new IllegalStateException(ex);
			}
		}
		this.open.clear();
	}

}
