package dev.ratelimit.spring.web.internal;

import java.security.Principal;
import java.util.List;

import org.jspecify.annotations.Nullable;

import org.springframework.http.server.PathContainer;

/** A GET of {@code /} whose connection delivered {@code origin}, and nothing else. */
record OriginRequest(ClientAddresses.Origin origin) implements LimitedRequest {

	/** A request from {@code socketAddress}, with no forwarding headers. */
	static OriginRequest from(String socketAddress) {
		return new OriginRequest(new ClientAddresses.Origin(socketAddress, List.of(), List.of()));
	}

	@Override
	public String method() {
		return "GET";
	}

	@Override
	public PathContainer path() {
		return PathContainer.parsePath("/");
	}

	@Override
	public String uri() {
		return "/";
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
		return null;
	}

	@Override
	public Object unwrap() {
		return this;
	}

}
