package dev.ratelimit.spring.webflux;

import java.util.concurrent.atomic.AtomicBoolean;

import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import reactor.blockhound.BlockHound;

/**
 * Installs BlockHound once in the JVM of the WebFlux tests, which Maven runs apart from the others: from then on,
 * any blocking call on a non-blocking thread (Reactor's, Netty's event loops, Lettuce's) fails with
 * {@code BlockingOperationError}.
 */
final class BlockingCallsFail implements BeforeAllCallback {

	private static final AtomicBoolean INSTALLED = new AtomicBoolean();

	@Override
	public void beforeAll(ExtensionContext context) {
		if (INSTALLED.compareAndSet(false, true)) {
			BlockHound.install();
		}
	}

}
