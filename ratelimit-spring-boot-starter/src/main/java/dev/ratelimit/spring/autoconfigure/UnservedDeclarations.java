package dev.ratelimit.spring.autoconfigure;

import java.util.List;

import dev.ratelimit.spring.web.internal.Declarations;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.SmartInitializingSingleton;

/**
 * Says at startup, in an application that serves no web requests, that the {@link dev.ratelimit.spring.RateLimited}
 * declarations of its controllers limit nothing there: such a start, a {@code @SpringBootTest} without a web
 * environment for one, neither applies nor checks them. Those of other beans limit their calls all the same.
 */
final class UnservedDeclarations implements SmartInitializingSingleton {

	private static final Log logger = LogFactory.getLog(UnservedDeclarations.class);

	/** How many declarations the line names. */
	private static final int NAMED = 3;

	private final ListableBeanFactory beanFactory;

	/**
	 * Creates the report of the given beans' declarations.
	 * @param beanFactory the application's beans
	 */
	UnservedDeclarations(ListableBeanFactory beanFactory) {
		this.beanFactory = beanFactory;
	}

	@Override
	public void afterSingletonsInstantiated() {
		if (!logger.isInfoEnabled()) {
			return;
		}
		List<String> declarations = Declarations.onControllers(this.beanFactory);
		if (declarations.isEmpty()) {
			return;
		}
		String named = String.join(", ", declarations.subList(0, Math.min(NAMED, declarations.size())));
		int more = declarations.size() - NAMED;
		logger.info("@RateLimited on controllers limits nothing here: this application serves no web requests, so "
				+ declarations.size() + ((declarations.size() == 1) ? " declaration is" : " declarations are")
				+ " neither applied nor checked (@RateLimited on " + named + ((more > 0) ? " and " + more + " more" : "")
				+ ").");
	}

}
