package dev.ratelimit.spring.method.internal;

import dev.ratelimit.spring.RateLimited;
import dev.ratelimit.spring.web.internal.LimitCatalog;
import dev.ratelimit.spring.web.internal.RequestDecisions;

import org.springframework.aop.ClassFilter;
import org.springframework.aop.Pointcut;
import org.springframework.aop.framework.autoproxy.AbstractBeanFactoryAwareAdvisingPostProcessor;
import org.springframework.aop.support.ComposablePointcut;
import org.springframework.aop.support.DefaultPointcutAdvisor;
import org.springframework.aop.support.annotation.AnnotationMatchingPointcut;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.core.annotation.MergedAnnotations;
import org.springframework.core.annotation.MergedAnnotations.SearchStrategy;
import org.springframework.stereotype.Controller;

/**
 * Advises every bean whose class or methods declare {@link RateLimited}, as Spring's own
 * {@code AsyncAnnotationBeanPostProcessor} does for {@code @Async}: a proxy applies the limits to each call.
 * Controllers are left to the web stack, which limits the requests they handle.
 */
public final class LimitedMethodsPostProcessor extends AbstractBeanFactoryAwareAdvisingPostProcessor {

	private static final ClassFilter NOT_A_CONTROLLER = (type) -> !MergedAnnotations
		.from(type, SearchStrategy.TYPE_HIERARCHY)
		.isPresent(Controller.class);

	/**
	 * Creates the post-processor.
	 * @param proxyTargetClass whether to proxy a class rather than its interfaces, as
	 * {@code spring.aop.proxy-target-class} says
	 */
	public LimitedMethodsPostProcessor(boolean proxyTargetClass) {
		setProxyTargetClass(proxyTargetClass);
		// before any other advisor of an existing proxy: a call over its limit starts no transaction
		setBeforeExistingAdvisors(true);
	}

	@Override
	public void setBeanFactory(BeanFactory beanFactory) {
		super.setBeanFactory(beanFactory);
		ObjectProvider<LimitCatalog> catalog = beanFactory.getBeanProvider(LimitCatalog.class);
		ObjectProvider<RequestDecisions> decisions = beanFactory.getBeanProvider(RequestDecisions.class);
		Pointcut pointcut = new ComposablePointcut(new AnnotationMatchingPointcut(RateLimited.class, true))
			.union(new AnnotationMatchingPointcut(null, RateLimited.class, true))
			.union(new AnnotationMatchingPointcut(RateLimited.List.class, true))
			.union(new AnnotationMatchingPointcut(null, RateLimited.List.class, true))
			.intersection(NOT_A_CONTROLLER);
		this.advisor = new DefaultPointcutAdvisor(pointcut, new LimitedMethodInterceptor(catalog, decisions));
	}

}
