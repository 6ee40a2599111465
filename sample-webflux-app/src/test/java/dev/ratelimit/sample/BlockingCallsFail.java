package dev.ratelimit.sample;

import java.util.concurrent.atomic.AtomicBoolean;

import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import reactor.blockhound.BlockHound;

/**
 * Installs BlockHound before the first test of the WebFlux sample, registered for every test class: the Spring
 * MVC sample's tests then run against the WebFlux sample with any blocking call on a non-blocking thread
 * (Reactor's, Netty's event loops, Lettuce's) failing with {@code BlockingOperationError}.
 */
public final class BlockingCallsFail implements BeforeAllCallback {

	private static final AtomicBoolean INSTALLED = new AtomicBoolean();

	@Override
	public void beforeAll(ExtensionContext context) {
		if (INSTALLED.compareAndSet(false, true)) {
			BlockHound.install();
		}
	}

}
