package dev.ratelimit.spring.web.internal;

import java.util.List;
import java.util.function.BiConsumer;

import org.springframework.web.method.HandlerMethod;

/**
 * The web stack of an application that serves no web requests: no handlers, no rules, no resolver beans. The
 * limits of bean methods and of code apply there all the same.
 */
public final class NoWebStack implements WebStack {

	private static final ResolverTypes NONE = new ResolverTypes(
			new ResolverTypes.Type<>(NoResolver.class, (resolver, request) -> null),
			new ResolverTypes.Type<>(NoResolver.class, (resolver, request) -> null),
			new ResolverTypes.Type<>(NoResolver.class, (resolver, request) -> false));

	@Override
	public void forEachHandler(BiConsumer<HandlerMethod, List<String>> action) {
	}

	@Override
	public ResolverTypes resolvers() {
		return NONE;
	}

	@Override
	public String name() {
		return "no web stack";
	}

	@Override
	public boolean servesRequests() {
		return false;
	}

	/** The type of resolver beans where none can be: no bean is of it. */
	private interface NoResolver {

	}

}
