package dev.ratelimit.spring.webmvc;

import java.io.IOException;

import dev.ratelimit.spring.RateLimitExceededException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.jspecify.annotations.Nullable;

import org.springframework.web.servlet.HandlerExceptionResolver;
import org.springframework.web.servlet.ModelAndView;

/**
 * Answers a {@link RateLimitExceededException} that left a handler, thrown by a limited bean method it called,
 * with the 429 of a limited handler. Registered after Spring MVC's own resolvers, so that an
 * {@code @ExceptionHandler} of the application's for it wins.
 */
final class RateLimitExceptionResolver implements HandlerExceptionResolver {

	private final ServletDecisions decisions;

	RateLimitExceptionResolver(ServletDecisions decisions) {
		this.decisions = decisions;
	}

	@Override
	public @Nullable ModelAndView resolveException(HttpServletRequest request, HttpServletResponse response,
			@Nullable Object handler, Exception ex) {
		if (!(ex instanceof RateLimitExceededException exceeded) || response.isCommitted()) {
			return null;
		}
		try {
			this.decisions.reject(request, response, exceeded);
		}
		catch (IOException failure) {
			return null;
		}
		return new ModelAndView();
	}

}
