package dev.ratelimit.spring.webflux;

import org.jspecify.annotations.Nullable;

import org.springframework.web.server.ServerWebExchange;

/**
 * A WebFlux request as {@code spel:} keys, costs and exemptions read it under {@code #request}: with the
 * methods of a servlet request that such expressions use, so that one expression, such as
 * {@code #request.getHeader('Authorization') == null}, means the same on Spring MVC and on WebFlux, and with
 * the exchange itself for anything else.
 */
public final class SpelRequest {

	private final ExchangeLimitedRequest request;

	SpelRequest(ExchangeLimitedRequest request) {
		this.request = request;
	}

	/**
	 * Returns the first value of a header.
	 * @param name the header's name
	 * @return the value, or null
	 */
	public @Nullable String getHeader(String name) {
		return this.request.header(name);
	}

	/**
	 * Returns the first value of a query parameter.
	 * @param name the parameter's name
	 * @return the value, or null
	 */
	public @Nullable String getParameter(String name) {
		return this.request.parameter(name);
	}

	/**
	 * Returns the HTTP method.
	 * @return the method, such as {@code GET}
	 */
	public String getMethod() {
		return this.request.method();
	}

	/**
	 * Returns the path of the request's URI, as received.
	 * @return the path
	 */
	public String getRequestURI() {
		return this.request.uri();
	}

	/**
	 * Returns the exchange.
	 * @return the exchange
	 */
	public ServerWebExchange getExchange() {
		return this.request.exchange();
	}

}
