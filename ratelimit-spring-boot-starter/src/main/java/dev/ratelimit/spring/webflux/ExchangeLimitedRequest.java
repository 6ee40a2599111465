package dev.ratelimit.spring.webflux;

import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.security.Principal;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

import dev.ratelimit.spring.server.internal.ServletOrigin;
import dev.ratelimit.spring.web.internal.ClientAddresses;
import dev.ratelimit.spring.web.internal.LimitedRequest;
import jakarta.servlet.http.HttpServletRequest;
import org.jspecify.annotations.Nullable;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.netty.Connection;
import reactor.netty.http.server.HttpServerRequest;

import org.springframework.http.server.PathContainer;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.http.server.reactive.ServerHttpRequestDecorator;
import org.springframework.util.ClassUtils;
import org.springframework.web.server.ServerWebExchange;

/**
 * A WebFlux exchange as its limits see it. What WebFlux only tells asynchronously, the principal and what the
 * application's reactive resolver beans answer, is resolved before the request is decided and kept here.
 * <p>
 * The origin is what the connection delivered, whatever {@code server.forward-headers-strategy} made of the
 * request: on Reactor Netty the connection's own remote address and the headers as received, on a servlet
 * container the innermost request's, else the request's remote address and headers.
 */
final class ExchangeLimitedRequest implements LimitedRequest {

	private static final boolean REACTOR_NETTY_PRESENT = ClassUtils
		.isPresent("reactor.netty.http.server.HttpServerRequest", ExchangeLimitedRequest.class.getClassLoader());

	private static final boolean SERVLET_PRESENT = ClassUtils.isPresent("jakarta.servlet.http.HttpServletRequest",
			ExchangeLimitedRequest.class.getClassLoader());


	private final ServerWebExchange exchange;

	private volatile @Nullable Principal principal;

	/** What each reactive resolver bean answered, by bean. */
	private final Map<Object, Object> resolved = Collections.synchronizedMap(new IdentityHashMap<>());

	ExchangeLimitedRequest(ServerWebExchange exchange) {
		this.exchange = exchange;
	}

	/** Keeps the authenticated principal, once known. */
	void principal(Principal principal) {
		this.principal = principal;
	}

	ServerWebExchange exchange() {
		return this.exchange;
	}

	/** Keeps what a resolver bean answered for this request; nothing for an empty answer. */
	void resolved(Object resolver, @Nullable Object value) {
		if (value != null) {
			this.resolved.put(resolver, value);
		}
	}

	/** What a resolver bean answered for this request, or null. */
	@Nullable Object answerOf(Object resolver) {
		return this.resolved.get(resolver);
	}

	@Override
	public String method() {
		return this.exchange.getRequest().getMethod().name();
	}

	@Override
	public PathContainer path() {
		return this.exchange.getRequest().getPath().pathWithinApplication();
	}

	@Override
	public String uri() {
		return this.exchange.getRequest().getPath().value();
	}

	@Override
	public @Nullable String header(String name) {
		return this.exchange.getRequest().getHeaders().getFirst(name);
	}

	@Override
	public @Nullable String parameter(String name) {
		return this.exchange.getRequest().getQueryParams().getFirst(name);
	}

	@Override
	public @Nullable Principal principal() {
		return this.principal;
	}

	@Override
	public ClientAddresses.Origin origin() {
		ServerHttpRequest request = this.exchange.getRequest();
		Object received = received();
		ClientAddresses.Origin origin = null;
		if (REACTOR_NETTY_PRESENT) {
			origin = Netty.origin(received);
		}
		if (origin == null && SERVLET_PRESENT) {
			origin = Servlet.origin(received);
		}
		if (origin != null) {
			return origin;
		}
		return new ClientAddresses.Origin(address(request.getRemoteAddress()),
				List.copyOf(request.getHeaders().getOrEmpty(ClientAddresses.Origin.FORWARDED)),
				List.copyOf(request.getHeaders().getOrEmpty(ClientAddresses.Origin.X_FORWARDED_FOR)));
	}

	/** A view with the methods of a servlet request, so that an expression reads the same on both stacks. */
	@Override
	public SpelRequest unwrap() {
		return new SpelRequest(this);
	}

	/**
	 * The scheduler of the thread that serves the request's connection: its Netty event loop on Reactor Netty,
	 * else Reactor's parallel workers.
	 */
	Scheduler eventLoop() {
		Scheduler loop = null;
		if (REACTOR_NETTY_PRESENT) {
			loop = Netty.eventLoop(received());
		}
		return (loop != null) ? loop : Schedulers.parallel();
	}

	/**
	 * The request as the server received it, or null for one that no server received: the mock request of a test's
	 * {@code WebTestClient} bound to the application, which refuses to give one.
	 */
	private @Nullable Object received() {
		try {
			return ServerHttpRequestDecorator.getNativeRequest(this.exchange.getRequest());
		}
		catch (IllegalStateException ex) {
			return null;
		}
	}

	/** The origin of a request that Reactor Netty received; loaded only when Reactor Netty is present. */
	private static final class Netty {

		static @Nullable Scheduler eventLoop(@Nullable Object received) {
			if (received instanceof Connection connection) {
				return Schedulers.fromExecutor(connection.channel().eventLoop());
			}
			return null;
		}

		static ClientAddresses.@Nullable Origin origin(@Nullable Object received) {
			if (received instanceof HttpServerRequest netty) {
				return new ClientAddresses.Origin(address(netty.connectionRemoteAddress()),
						netty.requestHeaders().getAll(ClientAddresses.Origin.FORWARDED),
						netty.requestHeaders().getAll(ClientAddresses.Origin.X_FORWARDED_FOR));
			}
			return null;
		}

	}

	/** The origin of a request that a servlet container received; loaded only when the servlet API is present. */
	private static final class Servlet {

		static ClientAddresses.@Nullable Origin origin(@Nullable Object received) {
			return (received instanceof HttpServletRequest servlet) ? ServletOrigin.of(servlet) : null;
		}

	}

	/** The address as a servlet container writes a remote address: the literal, without the port. */
	private static String address(@Nullable SocketAddress address) {
		if (address instanceof InetSocketAddress inet) {
			return (inet.getAddress() != null) ? inet.getAddress().getHostAddress() : inet.getHostString();
		}
		return String.valueOf(address);
	}

}
