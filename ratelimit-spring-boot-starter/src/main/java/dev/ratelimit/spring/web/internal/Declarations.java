package dev.ratelimit.spring.web.internal;

import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.BiConsumer;

import dev.ratelimit.spring.RateLimited;

import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.core.annotation.MergedAnnotations;
import org.springframework.core.annotation.MergedAnnotations.SearchStrategy;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;

/**
 * The {@link RateLimited} declarations on the beans of an application, on a class or on a method. Reads no web
 * type, so that an application without a web stack can list them too.
 */
public final class Declarations {

	private Declarations() {
	}

	/**
	 * Calls {@code action} with the name and the class of every bean, each class once, as written rather than as
	 * proxied; a JDK proxy is skipped, since its methods are not those a declaration is on.
	 */
	static void forEachBeanClass(ListableBeanFactory beanFactory, BiConsumer<String, Class<?>> action) {
		Set<Class<?>> seen = new HashSet<>();
		for (String name : beanFactory.getBeanDefinitionNames()) {
			Class<?> type = beanFactory.getType(name, false);
			if (type != null && !Proxy.isProxyClass(type) && seen.add(ClassUtils.getUserClass(type))) {
				action.accept(name, ClassUtils.getUserClass(type));
			}
		}
	}

	/** Returns the methods of {@code type} that declare a limit. */
	static List<Method> methods(Class<?> type) {
		List<Method> declared = new ArrayList<>();
		for (Method method : ReflectionUtils.getUniqueDeclaredMethods(type, ReflectionUtils.USER_DECLARED_METHODS)) {
			if (MergedAnnotations.from(method, SearchStrategy.TYPE_HIERARCHY).isPresent(RateLimited.class)) {
				declared.add(method);
			}
		}
		return declared;
	}

	/** Returns whether {@code type} itself declares a limit for its handler methods. */
	static boolean onClass(Class<?> type) {
		return MergedAnnotations.from(type, SearchStrategy.TYPE_HIERARCHY).isPresent(RateLimited.class);
	}

	/** Returns every declaration, written as {@code class Type} or {@code Type.method()}. */
	public static List<String> all(ListableBeanFactory beanFactory) {
		List<String> all = new ArrayList<>();
		forEachBeanClass(beanFactory, (name, type) -> {
			if (onClass(type)) {
				all.add("class " + type.getName());
			}
			methods(type).forEach((method) -> all.add(type.getName() + "." + method.getName() + "()"));
		});
		return all;
	}

}
