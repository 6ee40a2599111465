package dev.ratelimit.spring.server.internal;

import java.util.Collections;
import java.util.Enumeration;
import java.util.List;

import dev.ratelimit.spring.web.internal.ClientAddresses;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletRequestWrapper;
import jakarta.servlet.http.HttpServletRequest;
import org.jspecify.annotations.Nullable;

/**
 * The origin of a request that a servlet container received, on either web stack: what {@link OriginValve}
 * recorded on Tomcat, else the innermost request under every wrapper, whatever the wrappers made of it. Only
 * loaded when the servlet API is present.
 */
public final class ServletOrigin {

	/** The request attribute of the request's {@link ClientAddresses.Origin}, as received. */
	static final String ATTRIBUTE = ServletOrigin.class.getName() + ".ORIGIN";

	private ServletOrigin() {
	}

	/**
	 * Returns the origin of a request.
	 * @param request the request, or a wrapper of it
	 * @return the socket peer and the forwarding headers as the connection delivered them
	 */
	public static ClientAddresses.Origin of(HttpServletRequest request) {
		if (request.getAttribute(ATTRIBUTE) instanceof ClientAddresses.Origin origin) {
			return origin;
		}
		ServletRequest innermost = request;
		while (innermost instanceof ServletRequestWrapper wrapper) {
			innermost = wrapper.getRequest();
		}
		HttpServletRequest received = (innermost instanceof HttpServletRequest http) ? http : request;
		return of(String.valueOf(innermost.getRemoteAddr()), received);
	}

	static ClientAddresses.Origin of(String peer, HttpServletRequest received) {
		return new ClientAddresses.Origin(peer, lines(received.getHeaders(ClientAddresses.Origin.FORWARDED)),
				lines(received.getHeaders(ClientAddresses.Origin.X_FORWARDED_FOR)));
	}

	private static List<String> lines(@Nullable Enumeration<String> lines) {
		return (lines == null || !lines.hasMoreElements()) ? List.of() : List.copyOf(Collections.list(lines));
	}

}
