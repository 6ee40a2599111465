package dev.ratelimit.spring.redis;

import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;

/**
 * Opens a client or connection on a thread of its own, one attempt at a time, so that a Redis that does not
 * answer keeps no caller waiting for the client's own connect and command timeouts. After a failed attempt,
 * the next caller starts another; once open, the client reconnects by itself.
 */
final class BackgroundOpen<C> {

	private final Supplier<C> connect;

	private @Nullable CompletableFuture<C> opening;

	BackgroundOpen(Supplier<C> connect) {
		this.connect = connect;
	}

	synchronized CompletableFuture<C> get() {
		CompletableFuture<C> opening = this.opening;
		if (opening == null || opening.isCompletedExceptionally()) {
			opening = CompletableFuture.supplyAsync(this.connect, (task) -> {
				Thread thread = new Thread(task, "ratelimit-redis-connect");
				thread.setDaemon(true);
				thread.start();
			});
			this.opening = opening;
		}
		return opening;
	}

}
