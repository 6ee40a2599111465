package dev.ratelimit.spring.webmvc;

import java.io.IOException;

import dev.ratelimit.spring.web.ClientAddresses;
import jakarta.servlet.ServletException;
import org.apache.catalina.connector.Request;
import org.apache.catalina.connector.Response;
import org.apache.catalina.valves.ValveBase;

/**
 * Records what the connection delivered, as a {@link ClientAddresses.Origin} request attribute, before Tomcat's
 * {@code RemoteIpValve} (which {@code server.forward-headers-strategy=native} adds) replaces the remote address
 * and consumes {@code X-Forwarded-For}: the first valve of the engine, so that rate limiting reads the socket peer
 * and the headers as received, and trusts only the proxies it was told to.
 */
final class OriginValve extends ValveBase {

	/** The request attribute of the request's {@link ClientAddresses.Origin}, as received. */
	static final String ORIGIN = OriginValve.class.getName() + ".ORIGIN";

	OriginValve() {
		super(true);
	}

	@Override
	public void invoke(Request request, Response response) throws IOException, ServletException {
		request.setAttribute(ORIGIN,
				new ClientAddresses.Origin(String.valueOf(request.getPeerAddr()),
						ClientAddresses.Origin.lines(request.getHeaders("Forwarded")),
						ClientAddresses.Origin.lines(request.getHeaders("X-Forwarded-For"))));
		getNext().invoke(request, response);
	}

}
