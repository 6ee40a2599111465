package dev.ratelimit.spring.web.internal;

import java.security.Principal;
import java.util.List;
import java.util.Map;
import java.util.function.BiFunction;
import java.util.function.Function;

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

	/** The key of requests limited by their user, and the kind its keys start with. */
	String USER = "user";

	/** The expressions' variable of the authenticated principal. */
	String PRINCIPAL = "principal";

	/** The expressions' variable of the client address, as keys write it. */
	String IP = "ip";

	/**
	 * Returns the key of {@code request}, before {@link Keys#safe(String)}.
	 * @param request the request
	 * @param uriVariables the template variables of the matched path pattern
	 */
	String key(LimitedRequest request, Map<String, String> uriVariables);

	static KeySource clientAddress(AddressKey address) {
		return (request, uriVariables) -> address.key(request);
	}

	/** The key that code passes, as it passes it. */
	static KeySource code() {
		return (request, uriVariables) -> String.valueOf(request.argument(CodeDeclarations.ARGUMENTS.get(0)));
	}

	/** One key for every client, for a limit they share. */
	static KeySource global() {
		return (request, uriVariables) -> "global";
	}

	static KeySource user(AddressKey address) {
		return (request, uriVariables) -> {
			Principal principal = request.principal();
			return orAddress("user:", (principal != null) ? principal.getName() : null, request, address);
		};
	}

	static KeySource header(String name, AddressKey address) {
		return (request, uriVariables) -> orAddress("header:", request.header(name), request, address);
	}

	static KeySource resolver(Function<LimitedRequest, @Nullable String> resolver, AddressKey address) {
		return (request, uriVariables) -> orAddress("bean:", resolver.apply(request), request, address);
	}

	/**
	 * Evaluates {@code expression} with the variables {@code #request}, {@code #principal}, {@code #ip}, every
	 * URI template variable by name, then every binding, in a context that can read properties and call
	 * methods but not reach types or beans.
	 */
	static KeySource expression(Expression expression, List<ParameterBinding> bindings, AddressKey address) {
		BiFunction<LimitedRequest, Map<String, String>, @Nullable Object> evaluated = evaluator(expression, bindings,
				address);
		return (request, uriVariables) -> {
			Object value = evaluated.apply(request, uriVariables);
			return orAddress("spel:", (value != null) ? value.toString() : null, request, address);
		};
	}

	/**
	 * Returns how {@code expression} is evaluated over a request, in the context of {@link #handlerContext}: an
	 * expression that is no more than a reference to one binding, such as {@code #customer}, gives that
	 * binding's value without being evaluated, as it would give it.
	 */
	static BiFunction<LimitedRequest, Map<String, String>, @Nullable Object> evaluator(Expression expression,
			List<ParameterBinding> bindings, AddressKey address) {
		String text = expression.getExpressionString().trim();
		for (ParameterBinding binding : bindings) {
			if (text.equals("#" + binding.variable())) {
				return binding::value;
			}
		}
		boolean readsIp = readsIp(expression);
		return (request, uriVariables) -> expression
			.getValue(handlerContext(readsIp, request, uriVariables, bindings, address));
	}

	/**
	 * Returns whether an expression may read a variable: whether its text names it, which every reading does.
	 * @param expression the expression's text
	 * @param variable the variable's name, without {@code #}
	 */
	static boolean mayRead(String expression, String variable) {
		return expression.contains("#" + variable);
	}

	/**
	 * Returns whether {@code expression} may read {@code #ip}: resolving the client address walks the forwarding
	 * headers, so a context gets it only then. Asked once per expression, not per request.
	 */
	static boolean readsIp(Expression expression) {
		return mayRead(expression.getExpressionString(), IP);
	}

	/**
	 * Returns the context of a {@code spel:} key: the variables of {@link #requestContext}, every URI template
	 * variable by name, then every binding.
	 */
	static SimpleEvaluationContext handlerContext(boolean readsIp, LimitedRequest request,
			Map<String, String> uriVariables, List<ParameterBinding> bindings, AddressKey address) {
		SimpleEvaluationContext context = readOnlyContext();
		uriVariables.forEach(context::setVariable);
		for (ParameterBinding binding : bindings) {
			context.setVariable(binding.variable(), binding.value(request, uriVariables));
		}
		setRequestVariables(context, readsIp, request, address);
		return context;
	}

	/**
	 * Returns a context with the variables {@code #request}, {@code #principal} and, when {@code readsIp}, {@code #ip}
	 * (the client address as keys write it) that can read properties and call methods but not reach types or
	 * beans.
	 */
	static SimpleEvaluationContext requestContext(boolean readsIp, LimitedRequest request, AddressKey address) {
		SimpleEvaluationContext context = readOnlyContext();
		setRequestVariables(context, readsIp, request, address);
		return context;
	}

	private static SimpleEvaluationContext readOnlyContext() {
		return SimpleEvaluationContext.forReadOnlyDataBinding().withInstanceMethods().build();
	}

	private static void setRequestVariables(SimpleEvaluationContext context, boolean readsIp,
			LimitedRequest request, AddressKey address) {
		context.setVariable("request", request.unwrap());
		context.setVariable(PRINCIPAL, request.principal());
		if (readsIp) {
			context.setVariable(IP, address.text(request));
		}
	}

	private static String orAddress(String kind, @Nullable String value, LimitedRequest request,
			AddressKey address) {
		return (value == null || value.isEmpty()) ? request.anonymousKey(address) : kind + value;
	}

}
