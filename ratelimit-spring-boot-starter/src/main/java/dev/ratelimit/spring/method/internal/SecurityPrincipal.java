package dev.ratelimit.spring.method.internal;

import java.security.Principal;

import org.jspecify.annotations.Nullable;

import org.springframework.security.authentication.AnonymousAuthenticationToken;
import org.springframework.security.core.Authentication;
import org.springframework.security.core.context.SecurityContextHolder;

/**
 * The authenticated user of a call, as Spring Security holds it: loaded only where Spring Security is on the
 * class path. An anonymous authentication is no user, as it is no principal of a web request.
 */
final class SecurityPrincipal {

	private SecurityPrincipal() {
	}

	/** The user of the calling thread, or null. */
	static @Nullable Principal current() {
		return user(SecurityContextHolder.getContext().getAuthentication());
	}

	static @Nullable Principal user(@Nullable Authentication authentication) {
		return (authentication != null && authentication.isAuthenticated()
				&& !(authentication instanceof AnonymousAuthenticationToken)) ? authentication : null;
	}

}
