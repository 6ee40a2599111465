package dev.ratelimit.spring;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Repeatable;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import dev.ratelimit.core.Algorithm;

/**
 * Limits how often a client may call a Spring MVC handler method, or every handler method of a controller.
 * <p>
 * A method's own annotations replace those of its class. The annotation is repeatable: the limits declared
 * together on one method or class are stacked, and a request passes only if every one of them allows it; a
 * request that one limit denies takes nothing from the others. Each stacked limit has its own
 * {@link #key() key}: a limit per client under a {@code global} one that every client shares is two stacked
 * declarations. A class-level declaration is one quota shared by all the handler methods of the class.
 * <p>
 * Every value can be overridden without recompiling under {@code ratelimit.policies.<name>.*}, where
 * {@code <name>} is the policy's {@link #name() name}. Declarations are checked when the application starts:
 * an invalid one stops the start with a message naming the method and the value.
 *
 * @see dev.ratelimit.core.RateLimitPolicy
 */
@Target({ ElementType.METHOD, ElementType.TYPE })
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Repeatable(RateLimited.List.class)
public @interface RateLimited {

	/**
	 * Permits per window, at least 1.
	 * @return the limit
	 */
	long limit();

	/**
	 * The window: a whole number with {@code ms}, {@code s}, {@code m}, {@code h} or {@code d}, such as
	 * {@code 10s}, or ISO-8601 such as {@code PT10S}.
	 * @return the window
	 */
	String window();

	/**
	 * The algorithm, at most one; by default {@code ratelimit.default-algorithm}, itself {@link Algorithm#GCRA}
	 * unless configured.
	 * @return the algorithm, or none for the default
	 */
	Algorithm[] algorithm() default {};

	/**
	 * Capacity of the bucket algorithms ({@link Algorithm#TOKEN_BUCKET}, {@link Algorithm#GCRA}) and queue
	 * length of {@link Algorithm#LEAKY_BUCKET}; 0, the default, means the limit. The window algorithms have no
	 * burst.
	 * <p>
	 * The leaky bucket shapes traffic: a request that finds a place in the queue is held, without a servlet
	 * container thread, until its slot, one every {@code window / limit}, and only then reaches the handler; a
	 * request that finds the queue full is rejected.
	 * @return the burst, or 0 for the limit
	 */
	long burst() default 0;

	/**
	 * {@link Algorithm#LEAKY_BUCKET} only: how many of the queued requests pass at once instead of waiting for
	 * their slot, as nginx's {@code limit_req ... delay=}. The queue still frees one place per interval, so a
	 * burst that passed at once is paid for by the requests that follow. 0, the default, holds every queued
	 * request until its slot; at most {@link #burst()}. Not together with {@link #noDelay()}.
	 * @return how many queued requests pass without waiting
	 */
	long delayAfter() default 0;

	/**
	 * {@link Algorithm#LEAKY_BUCKET} only: whether the whole queue passes at once instead of waiting, as
	 * nginx's {@code limit_req ... nodelay}: the same as a {@link #delayAfter()} of the whole burst. Requests
	 * beyond the burst are still rejected, and the queue frees one place per interval.
	 * @return whether queued requests pass without waiting
	 */
	boolean noDelay() default false;

	/**
	 * How long a client stays refused once this limit refused it, such as {@code "60s"}, whatever its quota says
	 * meanwhile: every request is answered 429 with the rest of the penalty as its {@code Retry-After}, and takes
	 * nothing, so that the quota is full again when the penalty ends. Empty, the default, refuses a client only
	 * while it is over the limit. The Actuator's reset lifts a penalty; in shadow mode it is reported, never
	 * applied.
	 * @return the penalty, as {@code 500ms}, {@code 10s}, {@code 1m}, {@code 1h} or ISO-8601; empty for none
	 */
	String penalty() default "";

	/**
	 * Permits each request takes, at most the capacity (the burst, or the limit of the window algorithms).
	 * @return the cost
	 */
	long cost() default 1;

	/**
	 * A SpEL expression computing the permits each request takes, instead of a constant {@link #cost()}: over
	 * the same variables as a {@code spel:} {@link #key() key}, such as {@code #size} for a
	 * {@code @RequestParam int size}. It must give a whole number from 1 to the capacity: a request whose cost
	 * is not a positive whole number, or is more than the capacity and so could never pass, is answered with
	 * 400 and a problem body, and takes nothing. Every cost of a request takes from the same quota of its key.
	 * Not together with a {@link #cost()} other than 1.
	 * @return the expression, or empty for the constant cost
	 */
	String costExpression() default "";

	/**
	 * Limits per plan of the client, which replace this declaration's {@link #limit()}, {@link #window()} and
	 * {@link #burst()} for the requests that the application's {@link PlanResolver} puts on that plan. A
	 * request without a plan, or on a plan that no declaration of the endpoint knows, gets this declaration's
	 * own values. Each plan's limits have a state of their own, named {@code <name>:<plan>} in headers and
	 * metrics; more plans can be added, and these replaced, under {@code ratelimit.policies.<name>.plans}.
	 * @return the plans
	 */
	Plan[] plans() default {};

	/**
	 * Who is limited:
	 * <ul>
	 * <li>{@code ip} (the default): the client address, the socket peer unless it is one of
	 * {@code ratelimit.client-address.trusted-proxies}, an IPv6 client by its network (a /64 by default);</li>
	 * <li>{@code user}: the authenticated principal's name, the client address for anonymous requests;</li>
 * <li>{@code global}: one key that every client shares, for a ceiling over all of them, usually stacked
 * under a limit per client;</li>
	 * <li>{@code header:<Name>}: the value of a request header, the client address when it is absent;</li>
	 * <li>{@code bean:<name>}: the {@link KeyResolver} bean of that name;</li>
	 * <li>{@code spel:<expression>}: a SpEL expression over {@code #request}, {@code #principal},
	 * {@code #ip} and the handler method's {@code @PathVariable}, {@code @RequestParam} and
	 * {@code @RequestHeader} parameters by name, as raw strings.</li>
	 * </ul>
	 * A key that resolves to nothing falls back to the client address, so no request goes unlimited. Stacked
 * limits may have different keys.
	 * @return the key
	 */
	String key() default "";

	/**
	 * Names the policy in response headers, metrics and {@code ratelimit.policies.<name>}: 1 to 100 letters,
	 * digits or {@code . _ - :}, unique in the application. By default the simple name of the controller class
	 * and, for a method, a dot and the method's name, such as {@code DemoController.gcra}; stacked limits
	 * without a name are numbered from 1, such as {@code DemoController.stacked.2}.
	 * @return the name, or empty for the default
	 */
	String name() default "";

	/**
	 * Response statuses that count against the limit, such as {@code 401} and {@code 403} to limit failed
	 * logins; empty, the default, counts every response. A request is decided before its handler runs, and
	 * refused with 429 once the client has spent its quota; afterwards a response of another status gives its
	 * permits back. Stacked limits count the same statuses.
	 * @return the counted statuses, or none for every response
	 */
	int[] countStatus() default {};

	/**
	 * How many of a client's requests may be in flight at once under this limit, besides its rate, keyed as the
	 * rate is: a request beyond them is refused with 429 and a {@code Retry-After} of one second until one of them
	 * ends. A request takes its permit once its rate admits it and gives it back when it ends, however it ends:
	 * a response, an exception, an asynchronous result, a timeout or a client that went away. On Redis and
	 * PostgreSQL each permit is a lease that the instance renews while the request runs, so the permits of an
	 * instance that dies return within {@code ratelimit.redis.in-flight-lease} ({@code ratelimit.jdbc.}). 0, the
	 * default, for no such limit.
	 * @return the most requests of a client in flight at once, or 0
	 */
	long concurrency() default 0;

	/**
	 * The limits of one plan of a {@link RateLimited} declaration; the algorithm, key and cost stay the
	 * declaration's.
	 */
	@Target({})
	@Retention(RetentionPolicy.RUNTIME)
	@Documented
	@interface Plan {

		/**
		 * The plan, as the {@link PlanResolver} names it: letters, digits, {@code -} and {@code _}, matched
		 * ignoring case and every character but letters and digits.
		 * @return the plan's name
		 */
		String name();

		/**
		 * Permits per window on this plan, at least 1.
		 * @return the limit
		 */
		long limit();

		/**
		 * The window on this plan; empty, the default, for the declaration's window.
		 * @return the window
		 */
		String window() default "";

		/**
		 * The burst on this plan; 0, the default, for the plan's limit.
		 * @return the burst
		 */
		long burst() default 0;

	}

	/**
	 * Holds the stacked {@link RateLimited} declarations of one method or class.
	 */
	@Target({ ElementType.METHOD, ElementType.TYPE })
	@Retention(RetentionPolicy.RUNTIME)
	@Documented
	@interface List {

		/**
		 * The stacked declarations.
		 * @return the declarations
		 */
		RateLimited[] value();

	}

}
