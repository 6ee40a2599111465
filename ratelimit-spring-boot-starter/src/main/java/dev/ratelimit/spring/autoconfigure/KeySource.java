package dev.ratelimit.spring.autoconfigure;

import java.security.Principal;
import java.util.List;
import java.util.Map;

import dev.ratelimit.spring.KeyResolver;
import jakarta.servlet.http.HttpServletRequest;
import org.jspecify.annotations.Nullable;

import org.springframework.expression.Expression;
import org.springframework.expression.spel.support.SimpleEvaluationContext;

/**
 * Computes the key of a request under one endpoint's limits. Every key starts with the kind of key it is, so
 * that a user named like an address never shares that address' quota, and falls back to the client address
 * when the request carries no better identity.
 */
@FunctionalInterface
interface KeySource {

	/**
	 * Returns the key of {@code request}, before {@link Keys#safe(String)}.
	 * @param request the request
	 * @param uriVariables the template variables of the matched path pattern
	 */
	String key(HttpServletRequest request, Map<String, String> uriVariables);

	static KeySource clientAddress() {
		return (request, uriVariables) -> addressKey(request);
	}

	static KeySource user() {
		return (request, uriVariables) -> {
			Principal principal = request.getUserPrincipal();
			return orAddress("user:", (principal != null) ? principal.getName() : null, request);
		};
	}

	static KeySource header(String name) {
		return (request, uriVariables) -> orAddress("header:", request.getHeader(name), request);
	}

	static KeySource resolver(KeyResolver resolver) {
		return (request, uriVariables) -> orAddress("bean:", resolver.resolve(request), request);
	}

	/**
	 * Evaluates {@code expression} with the variables {@code #request}, {@code #principal}, {@code #ip}, every
	 * URI template variable by name, then every binding, in a context that can read properties and call
	 * methods but not reach types or beans.
	 */
	static KeySource expression(Expression expression, List<ParameterBinding> bindings) {
		return (request, uriVariables) -> {
			SimpleEvaluationContext context = SimpleEvaluationContext.forReadOnlyDataBinding()
				.withInstanceMethods()
				.build();
			uriVariables.forEach(context::setVariable);
			for (ParameterBinding binding : bindings) {
				context.setVariable(binding.variable(), binding.value(request, uriVariables));
			}
			context.setVariable("request", request);
			context.setVariable("principal", request.getUserPrincipal());
			context.setVariable("ip", Keys.normalizeAddress(request.getRemoteAddr()));
			Object value = expression.getValue(context);
			return orAddress("spel:", (value != null) ? value.toString() : null, request);
		};
	}

	private static String orAddress(String kind, @Nullable String value, HttpServletRequest request) {
		return (value == null || value.isEmpty()) ? addressKey(request) : kind + value;
	}

	private static String addressKey(HttpServletRequest request) {
		return "ip:" + Keys.normalizeAddress(request.getRemoteAddr());
	}

}
