package dev.ratelimit.spring.server.internal;

import dev.ratelimit.spring.web.internal.ClientAddresses;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Server;

/**
 * Records what the connection delivered, as a {@link ClientAddresses.Origin} request attribute, before Jetty's
 * {@code ForwardedRequestCustomizer} (which {@code server.forward-headers-strategy=native} adds, and which
 * believes the forwarding headers of every client) replaces the remote address: the first customizer of every
 * connector, on Spring MVC and on WebFlux alike. {@link ServletOrigin} reads the record; {@link OriginValve} is
 * Tomcat's counterpart.
 */
public final class OriginCustomizer implements HttpConfiguration.Customizer {

	@Override
	public Request customize(Request request, HttpFields.Mutable responseHeaders) {
		HttpFields headers = request.getHeaders();
		request.setAttribute(ServletOrigin.ATTRIBUTE,
				new ClientAddresses.Origin(Request.getRemoteAddr(request),
						headers.getValuesList(ClientAddresses.Origin.FORWARDED),
						headers.getValuesList(ClientAddresses.Origin.X_FORWARDED_FOR)));
		return request;
	}

	/**
	 * Puts a customizer first on every HTTP connector of {@code server}, ahead of any that is there already.
	 * @param server the server, with its connectors
	 */
	public static void installOn(Server server) {
		for (Connector connector : server.getConnectors()) {
			for (HttpConfiguration.ConnectionFactory factory : connector
				.getConnectionFactories()
				.stream()
				.filter(HttpConfiguration.ConnectionFactory.class::isInstance)
				.map(HttpConfiguration.ConnectionFactory.class::cast)
				.toList()) {
				factory.getHttpConfiguration().getCustomizers().add(0, new OriginCustomizer());
			}
		}
	}

}
