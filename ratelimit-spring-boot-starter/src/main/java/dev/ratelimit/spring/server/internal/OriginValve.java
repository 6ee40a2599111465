package dev.ratelimit.spring.server.internal;

import java.io.IOException;

import jakarta.servlet.ServletException;
import org.apache.catalina.connector.Request;
import org.apache.catalina.connector.Response;
import org.apache.catalina.valves.ValveBase;

/**
 * Records what the connection delivered, as a
 * {@link dev.ratelimit.spring.web.internal.ClientAddresses.Origin} request attribute, before Tomcat's
 * {@code RemoteIpValve} (which {@code server.forward-headers-strategy=native} adds) replaces the remote address
 * and consumes {@code X-Forwarded-For}: the first valve of the engine, on Spring MVC and on WebFlux alike, so
 * that rate limiting reads the socket peer and the headers as received, and trusts only the proxies it was told
 * to. {@link ServletOrigin} reads the record.
 */
public final class OriginValve extends ValveBase {

	/** Creates the valve, which supports asynchronous requests. */
	public OriginValve() {
		super(true);
	}

	@Override
	public void invoke(Request request, Response response) throws IOException, ServletException {
		request.setAttribute(ServletOrigin.ATTRIBUTE,
				ServletOrigin.of(String.valueOf(request.getPeerAddr()), request.getRequest()));
		getNext().invoke(request, response);
	}

}
