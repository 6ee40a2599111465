package dev.ratelimit.core.testing;

import java.util.function.Consumer;
import java.util.function.Supplier;

import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * Gives tests the run's server of one kind, found once and closed at the end of the run. Before each test it
 * makes sure there is one: without it the test is skipped, or failed when the kind's {@code _REQUIRED} variable
 * is {@code true}. Inject the server into test, {@code @BeforeEach} or constructor parameters.
 * <p>
 * A Spring test that uses one closes its application context after its class ({@code @DirtiesContext}): a
 * context left in Spring's cache closes only as the JVM exits, after the server stopped, and would log the
 * outage.
 * @param <S> the server
 */
abstract class ServerExtension<S extends AutoCloseable> implements BeforeEachCallback, ParameterResolver {

	private final Class<S> type;

	private final Supplier<Object> find;

	private final Consumer<String> skipOrFail;

	/**
	 * An extension of one kind of server.
	 * @param type the server's type
	 * @param find finds the server, or returns why there is none
	 * @param skipOrFail skips or fails the test for that reason
	 */
	ServerExtension(Class<S> type, Supplier<Object> find, Consumer<String> skipOrFail) {
		this.type = type;
		this.find = find;
		this.skipOrFail = skipOrFail;
	}

	@Override
	public void beforeEach(ExtensionContext context) {
		server(context);
	}

	@Override
	public boolean supportsParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
		return parameterContext.getParameter().getType() == this.type;
	}

	@Override
	public Object resolveParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
		return server(extensionContext);
	}

	private S server(ExtensionContext context) {
		Found found = context.getRoot()
			.getStore(ExtensionContext.Namespace.create(getClass()))
			.computeIfAbsent(Found.class, (key) -> new Found(this.find.get()), Found.class);
		if (this.type.isInstance(found.value)) {
			return this.type.cast(found.value);
		}
		this.skipOrFail.accept(String.valueOf(found.value));
		throw new IllegalStateException("unreachable");
	}

	/** The run's server, or why there is none; closed with the root context at the end of the run. */
	private record Found(Object value) implements AutoCloseable {

		@Override
		public void close() {
			if (this.value instanceof AutoCloseable server) {
				try {
					server.close();
				}
				catch (Exception ex) {
					throw new IllegalStateException("The tests' server did not stop", ex);
				}
			}
		}

	}

}
