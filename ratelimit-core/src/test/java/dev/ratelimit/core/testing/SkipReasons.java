package dev.ratelimit.core.testing;

import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.engine.support.descriptor.MethodSource;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;

/**
 * Says on the console why a test did not run, which the build's summary counts as skipped without a word: a test
 * disabled where it cannot apply (a JDK feature), or one that aborted on a missing tool (Node, a Redis server).
 * Registered for every module whose tests have this jar on their class path.
 */
public final class SkipReasons implements TestExecutionListener {

	@Override
	public void executionSkipped(TestIdentifier test, String reason) {
		report(test, reason);
	}

	@Override
	public void executionFinished(TestIdentifier test, TestExecutionResult result) {
		if (result.getStatus() == TestExecutionResult.Status.ABORTED) {
			report(test, result.getThrowable().map(Throwable::getMessage).orElse("aborted"));
		}
	}

	private static void report(TestIdentifier test, String reason) {
		String name = test.getSource()
			.filter(MethodSource.class::isInstance)
			.map((source) -> ((MethodSource) source).getClassName() + "." + ((MethodSource) source).getMethodName())
			.orElse(test.getDisplayName());
		System.out.println("[SKIPPED] " + name + ": " + reason);
	}

}
