package dev.ratelimit.core.testing;

import java.util.List;

import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import dev.ratelimit.core.jdbc.JdbcRateLimitStore;
import dev.ratelimit.core.redis.RedisRateLimitStore;

/**
 * Keeps what the Redis and PostgreSQL stores log out of the test output, and prints it after a test that failed:
 * many tests break their server on purpose, and the warnings they cause are expected, so a passing build prints
 * none of them. Registered for every test of the modules that have the core's test-jar, through
 * {@code META-INF/services/org.junit.jupiter.api.extension.Extension} and
 * {@code junit.jupiter.extensions.autodetection.enabled} in {@code junit-platform.properties}.
 */
public final class QuietStoreLog implements BeforeEachCallback, AfterEachCallback {

	private static final ExtensionContext.Namespace NAMESPACE = ExtensionContext.Namespace
		.create(QuietStoreLog.class);

	private static final List<String> STORE_LOGGERS = List.of(RedisRateLimitStore.class.getName(),
			JdbcRateLimitStore.class.getName());

	@Override
	public void beforeEach(ExtensionContext context) {
		context.getStore(NAMESPACE)
			.put(Recorders.class, new Recorders(STORE_LOGGERS.stream().map(LogRecorder::record).toList()));
	}

	@Override
	public void afterEach(ExtensionContext context) {
		Recorders recorders = context.getStore(NAMESPACE).remove(Recorders.class, Recorders.class);
		if (recorders == null) {
			return;
		}
		recorders.logs.forEach(LogRecorder::close);
		if (context.getExecutionException().isEmpty()) {
			return;
		}
		for (int i = 0; i < STORE_LOGGERS.size(); i++) {
			LogRecorder log = recorders.logs.get(i);
			if (log.lines() > 0) {
				System.err.println("What " + STORE_LOGGERS.get(i) + " logged during the failed test "
						+ context.getDisplayName() + ":");
				log.print(System.err);
			}
		}
	}

	/** The recorders of one test, one per store logger. */
	private record Recorders(List<LogRecorder> logs) {
	}

}
