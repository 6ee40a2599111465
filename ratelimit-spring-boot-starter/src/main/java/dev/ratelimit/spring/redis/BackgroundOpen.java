package dev.ratelimit.spring.redis;

import java.util.concurrent.CompletableFuture;
import java.util.function.Predicate;
import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;

/**
 * Opens a connection on a thread of its own, one attempt at a time, so that a Redis that does not answer keeps
 * no caller waiting for the client's own connect and command timeouts. A failed or closed connection is opened
 * again by the next caller.
 */
final class BackgroundOpen<C> {

	private final Supplier<C> connect;

	private final Predicate<C> isOpen;

	private @Nullable CompletableFuture<C> opening;

	BackgroundOpen(Supplier<C> connect, Predicate<C> isOpen) {
		this.connect = connect;
		this.isOpen = isOpen;
	}

	synchronized CompletableFuture<C> get() {
		CompletableFuture<C> opening = this.opening;
		if (opening == null || opening.isCompletedExceptionally()
				|| (opening.isDone() && !this.isOpen.test(opening.join()))) {
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
