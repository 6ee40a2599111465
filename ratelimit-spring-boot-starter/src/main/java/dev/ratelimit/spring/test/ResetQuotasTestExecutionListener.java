package dev.ratelimit.spring.test;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import dev.ratelimit.core.RateLimitStore;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.test.context.TestContext;
import org.springframework.test.context.TestContextAnnotationUtils;
import org.springframework.test.context.support.AbstractTestExecutionListener;
import org.springframework.test.context.support.DirtiesContextTestExecutionListener;

/**
 * Resets every quota of the stores of a test's application context before each test method, unless the method or
 * its class {@link KeepQuotas keeps its quotas}; a class that does still starts full, before its first method. It
 * does nothing where the context has no store, or was never loaded.
 */
class ResetQuotasTestExecutionListener extends AbstractTestExecutionListener {

	/** After the context of a method that dirties it has been closed, so that the new one is reset. */
	static final int ORDER = DirtiesContextTestExecutionListener.ORDER + 100;

	private static final String STARTED = ResetQuotasTestExecutionListener.class.getName() + ".started";

	private static final Log logger = LogFactory.getLog(ResetQuotasTestExecutionListener.class);

	/** The stores told of once that they cannot reset every key. */
	private static final Set<Class<?>> toldCannotReset = ConcurrentHashMap.newKeySet();

	@Override
	public int getOrder() {
		return ORDER;
	}

	@Override
	public void beforeTestMethod(TestContext testContext) {
		boolean first = testContext.getAttribute(STARTED) == null;
		testContext.setAttribute(STARTED, Boolean.TRUE);
		if (AnnotatedElementUtils.hasAnnotation(testContext.getTestMethod(), KeepQuotas.class)) {
			return;
		}
		if (first || !TestContextAnnotationUtils.hasAnnotation(testContext.getTestClass(), KeepQuotas.class)) {
			resetQuotas(testContext);
		}
	}

	private static void resetQuotas(TestContext testContext) {
		if (!testContext.hasApplicationContext()) {
			return;
		}
		testContext.getApplicationContext().getBeanProvider(RateLimitStore.class).orderedStream().forEach((store) -> {
			store.resetAll().ifPresentOrElse(RateLimitStore.ResetAll::resetAll, () -> {
				if (toldCannotReset.add(store.getClass())) {
					logger.warn(store.getClass().getName() + " cannot reset every key at once (RateLimitStore.resetAll()"
							+ " is empty): its quotas carry over from one test method to the next.");
				}
			});
		});
	}

}
