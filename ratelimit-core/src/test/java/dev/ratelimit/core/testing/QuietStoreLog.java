package dev.ratelimit.core.testing;

import java.util.Optional;

import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import dev.ratelimit.core.redis.RedisRateLimitStore;

/**
 * Keeps what the Redis store logs out of the test output, and prints it after a test that failed: many tests
 * break Redis on purpose, and the warnings they cause are expected, so a passing build prints none of them.
 * Registered for every test of the modules that have the core's test-jar, through
 * {@code META-INF/services/org.junit.jupiter.api.extension.Extension} and
 * {@code junit.jupiter.extensions.autodetection.enabled} in {@code junit-platform.properties}.
 */
public final class QuietStoreLog implements BeforeEachCallback, AfterEachCallback {

	private static final ExtensionContext.Namespace NAMESPACE = ExtensionContext.Namespace
		.create(QuietStoreLog.class);

	@Override
	public void beforeEach(ExtensionContext context) {
		context.getStore(NAMESPACE).put(LogRecorder.class, LogRecorder.record(RedisRateLimitStore.class.getName()));
	}

	@Override
	public void afterEach(ExtensionContext context) {
		LogRecorder log = context.getStore(NAMESPACE).remove(LogRecorder.class, LogRecorder.class);
		if (log == null) {
			return;
		}
		log.close();
		Optional<Throwable> failure = context.getExecutionException();
		if (failure.isPresent() && log.lines() > 0) {
			System.err.println("What " + RedisRateLimitStore.class.getName() + " logged during the failed test "
					+ context.getDisplayName() + ":");
			log.print(System.err);
		}
	}

}
