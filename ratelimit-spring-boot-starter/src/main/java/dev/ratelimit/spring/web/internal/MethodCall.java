package dev.ratelimit.spring.web.internal;

import java.security.Principal;
import java.time.Duration;
import java.util.List;

import org.jspecify.annotations.Nullable;

import org.springframework.core.DefaultParameterNameDiscoverer;
import org.springframework.core.ParameterNameDiscoverer;
import org.springframework.http.server.PathContainer;

/**
 * A call of a limited bean method, or a decision that code asks for, as its limits see it: its arguments by
 * parameter name, the authenticated user of the calling context, and no HTTP request. A key that would fall back
 * to a client address falls back to {@link #ANONYMOUS}, one quota that every such call shares.
 */
public final class MethodCall implements LimitedRequest {

	/** The key of calls whose key is null or empty: they share one quota rather than each taking a fresh one. */
	public static final String ANONYMOUS = "anonymous";

	static final ParameterNameDiscoverer NAMES = new DefaultParameterNameDiscoverer();

	private static final PathContainer NO_PATH = PathContainer.parsePath("");

	private final String name;

	private final List<String> names;

	private final @Nullable Object[] arguments;

	private final @Nullable Principal principal;

	private final Duration maxWait;

	/**
	 * Creates the call.
	 * @param name what the call is of, as log lines name it
	 * @param names its parameters' names, as the key and cost expressions read them
	 * @param arguments its arguments, in the parameters' order
	 * @param principal the authenticated user of the calling context, or null
	 */
	MethodCall(String name, List<String> names, @Nullable Object[] arguments, @Nullable Principal principal) {
		this(name, names, arguments, principal, Duration.ZERO);
	}

	/**
	 * Creates a call that may wait up to {@code maxWait} for its permits, as code asks.
	 * @param name what the call is of, as log lines name it
	 * @param names its parameters' names
	 * @param arguments its arguments, in the parameters' order
	 * @param principal the authenticated user of the calling context, or null
	 * @param maxWait how long the call may wait for its permits
	 */
	MethodCall(String name, List<String> names, @Nullable Object[] arguments, @Nullable Principal principal,
			Duration maxWait) {
		this.name = name;
		this.names = names;
		this.arguments = arguments;
		this.principal = principal;
		this.maxWait = maxWait;
	}

	@Override
	public String method() {
		return "CALL";
	}

	@Override
	public PathContainer path() {
		return NO_PATH;
	}

	@Override
	public String uri() {
		return this.name;
	}

	@Override
	public @Nullable String header(String name) {
		return null;
	}

	@Override
	public @Nullable String parameter(String name) {
		return null;
	}

	@Override
	public @Nullable Principal principal() {
		return this.principal;
	}

	@Override
	public ClientAddresses.Origin origin() {
		throw new IllegalStateException("A method call has no client address: " + describe());
	}

	@Override
	public Object unwrap() {
		return this.name;
	}

	@Override
	public Duration maxWait() {
		return this.maxWait;
	}

	@Override
	public @Nullable Object argument(String name) {
		int index = this.names.indexOf(name);
		return (index >= 0 && index < this.arguments.length) ? this.arguments[index] : null;
	}

	@Override
	public String anonymousKey(AddressKey address) {
		return ANONYMOUS;
	}

	@Override
	public boolean answered() {
		return false;
	}

	@Override
	public String describe() {
		return "call of " + uri();
	}

}
