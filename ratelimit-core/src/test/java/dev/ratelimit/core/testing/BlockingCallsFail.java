package dev.ratelimit.core.testing;

import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import reactor.blockhound.BlockHound;
import reactor.blockhound.BlockingOperationError;
import reactor.core.publisher.Mono;

/**
 * Installs BlockHound before the first test class of a JVM that runs WebFlux tests: from then on, any blocking
 * call on a non-blocking thread (Reactor's, Netty's event loops, Lettuce's) fails with
 * {@code BlockingOperationError}. It then makes such a call itself, and fails every test class while that call
 * goes through, so that the tests never pass unwatched. BlockHound itself fails to install on a JDK run without
 * {@code -XX:+AllowRedefinitionToAddDeleteMethods}.
 */
public final class BlockingCallsFail implements BeforeAllCallback {

	private static volatile boolean watching;

	@Override
	public void beforeAll(ExtensionContext context) {
		if (!watching) {
			install();
		}
	}

	private static synchronized void install() {
		if (watching) {
			return;
		}
		// Lettuce guards each write with a lock held for a few instructions, by design on its own event loops. A
		// BlockingOperationError thrown from inside it left the lock's count of writers wrong, and the next writer
		// spun on it for good, hanging the JVM of the test: allowed, as Reactor and Spring allow their own.
		// Netty's pooling allocator likewise takes a lock of a buffer's magazine for a few instructions when it frees
		// the buffer, on whichever thread writes the response: a Reactor thread, for a request whose password Spring
		// Security checked on one.
		BlockHound.install((builder) -> {
			for (String method : List.of("incrementWriters", "decrementWriters", "lockWritersExclusive",
					"unlockWritersExclusive")) {
				builder.allowBlockingCallsInside("io.lettuce.core.protocol.SharedLock", method);
			}
			builder.allowBlockingCallsInside("io.netty.buffer.AdaptivePoolingAllocator$Magazine", "free");
		});
		Throwable caught = null;
		try {
			Mono.delay(Duration.ofMillis(1)).doOnNext((tick) -> sleep()).block();
		}
		catch (RuntimeException ex) {
			caught = ex;
		}
		Throwable root = caught;
		while (root != null && root.getCause() != null) {
			root = root.getCause();
		}
		if (!(root instanceof BlockingOperationError)) {
			throw new IllegalStateException("BlockHound is installed but let a blocking call through on a "
					+ "non-blocking thread", caught);
		}
		watching = true;
	}

	private static void sleep() {
		try {
			Thread.sleep(1);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

}
