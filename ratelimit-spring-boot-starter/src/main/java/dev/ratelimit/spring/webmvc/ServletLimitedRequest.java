package dev.ratelimit.spring.webmvc;

import java.security.Principal;

import dev.ratelimit.spring.server.internal.ServletOrigin;
import dev.ratelimit.spring.web.internal.ClientAddresses;
import dev.ratelimit.spring.web.internal.LimitedRequest;
import jakarta.servlet.http.HttpServletRequest;
import org.jspecify.annotations.Nullable;

import org.springframework.http.server.PathContainer;
import org.springframework.http.server.RequestPath;
import org.springframework.web.util.ServletRequestPathUtils;

/** A servlet request as its limits see it. */
record ServletLimitedRequest(HttpServletRequest request) implements LimitedRequest {

	@Override
	public String method() {
		return this.request.getMethod();
	}

	@Override
	public PathContainer path() {
		RequestPath path = ServletRequestPathUtils.hasParsedRequestPath(this.request)
				? ServletRequestPathUtils.getParsedRequestPath(this.request)
				: RequestPath.parse(this.request.getRequestURI(), this.request.getContextPath());
		return path.pathWithinApplication();
	}

	@Override
	public String uri() {
		return this.request.getRequestURI();
	}

	@Override
	public @Nullable String header(String name) {
		return this.request.getHeader(name);
	}

	@Override
	public @Nullable String parameter(String name) {
		return this.request.getParameter(name);
	}

	@Override
	public @Nullable Principal principal() {
		return this.request.getUserPrincipal();
	}

	@Override
	public ClientAddresses.Origin origin() {
		return ServletOrigin.of(this.request);
	}

	@Override
	public HttpServletRequest unwrap() {
		return this.request;
	}

}
