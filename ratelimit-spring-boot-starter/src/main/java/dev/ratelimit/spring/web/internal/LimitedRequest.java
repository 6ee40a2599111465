package dev.ratelimit.spring.web.internal;

import java.security.Principal;
import java.time.Duration;

import org.jspecify.annotations.Nullable;

import org.springframework.http.server.PathContainer;

/**
 * One request as its limits see it, whichever web stack serves it: what keys, exemptions, plans and costs read,
 * and what the log names it by. Each web stack adapts its own request to it once per limited request.
 */
public interface LimitedRequest {

	/** The HTTP method, such as {@code GET}. */
	String method();

	/** The path within the application, as the rules' patterns match it. */
	PathContainer path();

	/** The request's URI path as received, for log lines. */
	String uri();

	/** The first value of the header, or null. */
	@Nullable String header(String name);

	/** The first value of the request parameter, or null. */
	@Nullable String parameter(String name);

	/** The authenticated principal, or null. */
	@Nullable Principal principal();

	/** The socket peer and the forwarding headers as the connection delivered them. */
	ClientAddresses.Origin origin();

	/** The web stack's own request, as SpEL expressions read it under {@code #request}. */
	Object unwrap();

	/**
	 * How long the request may wait for its permits, which its limits then reserve for it: only code asks for a
	 * wait; a request of the web and a call of a limited method never wait.
	 */
	default Duration maxWait() {
		return Duration.ZERO;
	}

	/**
	 * The value of the method argument named {@code name}, for a call of a limited bean method; null for a web
	 * request, which has none.
	 */
	default @Nullable Object argument(String name) {
		return null;
	}

	/**
	 * The key of a request that carries no identity of its own: its client address, as {@code address} keys it.
	 */
	default String anonymousKey(AddressKey address) {
		return address.key(this);
	}

	/**
	 * Whether a response answers the request, which an allowed request's rate limit headers are written on: a
	 * call of a bean method has none.
	 */
	default boolean answered() {
		return true;
	}

	/** The method and the URI path, as log lines name the request. */
	default String describe() {
		return method() + " " + uri();
	}

}
