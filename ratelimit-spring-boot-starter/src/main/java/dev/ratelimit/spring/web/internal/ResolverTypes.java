package dev.ratelimit.spring.web.internal;

import java.util.function.BiFunction;
import java.util.function.Function;

import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.ObjectProvider;


/**
 * The types of the resolver beans that declarations name ({@code bean:} keys, exemptions, the plan resolver)
 * on one web stack, and how each reads a {@link LimitedRequest}: every web stack has types of its own, since
 * each resolver reads the stack's own request.
 *
 * @param keys the type of {@code bean:} keys
 * @param plans the type of the plan resolver
 * @param exemptions the type of {@code exempt-if=bean:} conditions
 */
public record ResolverTypes(Type<?, @Nullable String> keys, Type<?, @Nullable String> plans,
		Type<?, Boolean> exemptions) {

	/**
	 * One type of resolver bean.
	 *
	 * @param <T> the bean's type
	 * @param <R> what it tells of a request
	 * @param type the bean's type
	 * @param call how the bean reads a request
	 */
	public record Type<T, R>(Class<T> type, BiFunction<T, LimitedRequest, R> call) {

		/** The simple name of the type, as messages name it. */
		String name() {
			return this.type.getSimpleName();
		}

		/** The bean of this type named {@code name}, reading requests. */
		Resolver<R> bean(BeanFactory beans, String name) {
			return adapt(beans.getBean(name, this.type));
		}

		/** The application's beans of this type. */
		ObjectProvider<T> beans(BeanFactory beans) {
			return beans.getBeanProvider(this.type);
		}

		Resolver<R> adapt(T bean) {
			return new Resolver<>(bean, (request) -> this.call.apply(bean, request));
		}

	}

	/**
	 * A resolver bean, reading requests.
	 *
	 * @param <R> what it tells of a request
	 * @param bean the bean
	 * @param read how it reads a request
	 */
	record Resolver<R>(Object bean, Function<LimitedRequest, R> read) {
	}

}
