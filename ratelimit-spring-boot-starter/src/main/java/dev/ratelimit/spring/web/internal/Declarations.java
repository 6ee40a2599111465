package dev.ratelimit.spring.web.internal;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.BiConsumer;

import dev.ratelimit.spring.RateLimited;

import org.springframework.aop.framework.AopProxyUtils;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.core.annotation.MergedAnnotations;
import org.springframework.core.annotation.MergedAnnotations.SearchStrategy;
import org.springframework.stereotype.Controller;
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
	 * proxied: a JDK proxy's target class if the singleton exists already, since a proxy's methods are not those a
	 * declaration is on, else none.
	 */
	static void forEachBeanClass(ListableBeanFactory beanFactory, BiConsumer<String, Class<?>> action) {
		Set<Class<?>> seen = new HashSet<>();
		for (String name : beanFactory.getBeanDefinitionNames()) {
			Class<?> type = beanFactory.getType(name, false);
			if (type != null && Proxy.isProxyClass(type)) {
				type = (beanFactory instanceof ConfigurableListableBeanFactory configurable
						&& configurable.containsSingleton(name))
								? AopProxyUtils.ultimateTargetClass(beanFactory.getBean(name)) : null;
			}
			if (type != null && !Proxy.isProxyClass(type) && seen.add(ClassUtils.getUserClass(type))) {
				action.accept(name, ClassUtils.getUserClass(type));
			}
		}
	}

	/**
	 * Returns the methods of {@code type} whose calls are limited: those that declare a limit, and if the class
	 * declares one itself, every other method it declares that a proxy can advise, those of {@link Object} apart.
	 */
	static List<Method> limitedMethods(Class<?> type) {
		List<Method> limited = new ArrayList<>();
		for (Method method : ReflectionUtils.getUniqueDeclaredMethods(type, ReflectionUtils.USER_DECLARED_METHODS)) {
			if (limited(type, method)) {
				limited.add(method);
			}
		}
		return limited;
	}

	/**
	 * Returns whether the calls of a bean's method are limited: whether it declares a limit, or its class does
	 * and it is a method of the class's own that a proxy can advise, neither private nor static.
	 */
	static boolean limited(Class<?> type, Method method) {
		if (MergedAnnotations.from(method, SearchStrategy.TYPE_HIERARCHY).isPresent(RateLimited.class)) {
			return true;
		}
		int modifiers = method.getModifiers();
		return onClass(type) && !ReflectionUtils.isObjectMethod(method) && !method.isSynthetic()
				&& !Modifier.isPrivate(modifiers) && !Modifier.isStatic(modifiers);
	}

	/** Returns whether {@code type} is a controller, whose declarations limit the requests it handles. */
	static boolean controller(Class<?> type) {
		return MergedAnnotations.from(type, SearchStrategy.TYPE_HIERARCHY).isPresent(Controller.class);
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

	/**
	 * Returns every declaration on a controller, written as {@code class Type} or {@code Type.method()}: those that
	 * limit requests, which only a web stack serves.
	 */
	public static List<String> onControllers(ListableBeanFactory beanFactory) {
		List<String> all = new ArrayList<>();
		forEachBeanClass(beanFactory, (name, type) -> {
			if (!controller(type)) {
				return;
			}
			if (onClass(type)) {
				all.add("class " + type.getName());
			}
			methods(type).forEach((method) -> all.add(type.getName() + "." + method.getName() + "()"));
		});
		return all;
	}

}
