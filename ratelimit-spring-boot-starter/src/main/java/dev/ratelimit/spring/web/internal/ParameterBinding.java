package dev.ratelimit.spring.web.internal;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.jspecify.annotations.Nullable;

import org.springframework.core.DefaultParameterNameDiscoverer;
import org.springframework.core.MethodParameter;
import org.springframework.util.StringUtils;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.method.HandlerMethod;

/**
 * A handler method parameter whose raw value a key expression can read before Spring MVC resolves the
 * arguments: a {@code @PathVariable}, {@code @RequestParam} or {@code @RequestHeader}, exposed under the
 * parameter's Java name; or an argument of a limited bean method, under its parameter's name.
 *
 * @param variable the parameter's name, the expression's variable
 * @param source where the value comes from
 * @param name the path variable, request parameter or header to read
 */
record ParameterBinding(String variable, Source source, String name) {

	enum Source {

		PATH, PARAM, HEADER, ARGUMENT

	}

	@Nullable Object value(LimitedRequest request, Map<String, String> uriVariables) {
		return switch (this.source) {
			case PATH -> uriVariables.get(this.name);
			case PARAM -> request.parameter(this.name);
			case HEADER -> request.header(this.name);
			case ARGUMENT -> request.argument(this.name);
		};
	}

	/** The arguments of a bean method, each under its parameter's name; none if the names were not compiled in. */
	static List<ParameterBinding> of(Method method) {
		List<ParameterBinding> bindings = new ArrayList<>();
		String[] names = MethodCall.NAMES.getParameterNames(method);
		if (names != null) {
			for (String name : names) {
				bindings.add(new ParameterBinding(name, Source.ARGUMENT, name));
			}
		}
		return List.copyOf(bindings);
	}

	static List<ParameterBinding> of(HandlerMethod handlerMethod) {
		List<ParameterBinding> bindings = new ArrayList<>();
		for (MethodParameter parameter : handlerMethod.getMethodParameters()) {
			parameter.initParameterNameDiscovery(new DefaultParameterNameDiscoverer());
			String variable = parameter.getParameterName();
			if (variable == null) {
				continue;
			}
			PathVariable path = parameter.getParameterAnnotation(PathVariable.class);
			RequestParam param = parameter.getParameterAnnotation(RequestParam.class);
			RequestHeader header = parameter.getParameterAnnotation(RequestHeader.class);
			if (path != null) {
				bindings.add(new ParameterBinding(variable, Source.PATH, nameOr(path.name(), variable)));
			}
			else if (param != null) {
				bindings.add(new ParameterBinding(variable, Source.PARAM, nameOr(param.name(), variable)));
			}
			else if (header != null) {
				bindings.add(new ParameterBinding(variable, Source.HEADER, nameOr(header.name(), variable)));
			}
		}
		return List.copyOf(bindings);
	}

	private static String nameOr(String name, String fallback) {
		return StringUtils.hasText(name) ? name : fallback;
	}

}
