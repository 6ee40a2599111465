package dev.ratelimit.spring.webmvc;

import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import jakarta.servlet.AsyncContext;
import jakarta.servlet.AsyncEvent;
import jakarta.servlet.AsyncListener;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.http.HttpStatus;
import org.springframework.web.multipart.support.AbstractMultipartHttpServletRequest;
import org.springframework.web.util.WebUtils;

/**
 * Holds requests admitted into a leaky bucket's queue until their slot, without a servlet container thread.
 * <p>
 * A held request is put in asynchronous mode with the request and response its interceptor saw, as Spring MVC
 * does for a {@code Callable}, and its thread goes back to the container. When the delay has passed, the
 * scheduler dispatches the request again, to the same path; Spring MVC finds no concurrent result to process
 * and runs the handler as for a new request, and the interceptor lets the dispatch through as already decided.
 * <p>
 * The container gives up on a held request {@link #GRACE_MILLIS} after its slot and it is answered 503: only
 * a scheduler that is stuck or shut down is that late. A request that ends while held, because its client went
 * away or the container completed it, cancels its release.
 */
final class HeldRequests {

	/** How late a release may come before the container gives up on the request. */
	static final long GRACE_MILLIS = 30_000;

	private static final Log logger = LogFactory.getLog(HeldRequests.class);

	private final ScheduledExecutorService scheduler;

	private final AtomicInteger held = new AtomicInteger();

	HeldRequests(ScheduledExecutorService scheduler) {
		this.scheduler = scheduler;
	}

	/** Returns how many requests are held now, waiting for their slot. */
	int count() {
		return this.held.get();
	}

	/**
	 * Holds the request for {@code delayNanos}, after which it is dispatched again. The caller returns from
	 * the current dispatch without touching the request.
	 */
	public void hold(HttpServletRequest request, HttpServletResponse response, long delayNanos) {
		if (!request.isAsyncSupported()) {
			throw new IllegalStateException("Cannot hold " + request.getRequestURI()
					+ " until its slot: a filter or servlet handling it does not support asynchronous requests; "
					+ "register them with asyncSupported = true");
		}
		AbstractMultipartHttpServletRequest multipart = WebUtils.getNativeRequest(request,
				AbstractMultipartHttpServletRequest.class);
		if (multipart != null && multipart.isResolved()) {
			throw new IllegalStateException("Cannot hold " + request.getRequestURI()
					+ " until its slot: Spring MVC has already parsed its multipart body and deletes it when this "
					+ "dispatch ends; set spring.servlet.multipart.resolve-lazily=true to parse it when the "
					+ "handler runs");
		}
		AsyncContext context = request.startAsync(request, response);
		context.setTimeout(TimeUnit.NANOSECONDS.toMillis(delayNanos) + GRACE_MILLIS);
		Release release = new Release(context, this.held);
		context.addListener(release);
		this.held.incrementAndGet();
		try {
			release.scheduled(this.scheduler.schedule(release, delayNanos, TimeUnit.NANOSECONDS));
		}
		catch (RejectedExecutionException ex) {
			// the application is stopping
			release.settle();
			release.giveUp();
		}
	}

	/**
	 * Dispatches one held request when it runs, unless the request ended first. Exactly one of the release,
	 * the timeout and the end of the request acts.
	 */
	private static final class Release implements Runnable, AsyncListener {

		private final AsyncContext context;

		/** The requests held, this one among them until it settles. */
		private final AtomicInteger held;

		private final AtomicBoolean settled = new AtomicBoolean();

		private volatile @Nullable Future<?> task;

		Release(AsyncContext context, AtomicInteger held) {
			this.context = context;
			this.held = held;
		}

		void scheduled(Future<?> task) {
			this.task = task;
			if (this.settled.get()) {
				task.cancel(false);
			}
		}

		@Override
		public void run() {
			if (this.settled.compareAndSet(false, true)) {
				this.held.decrementAndGet();
				try {
					this.context.dispatch();
				}
				catch (IllegalStateException ex) {
					// the request completed meanwhile: nobody waits for it any more
				}
			}
		}

		@Override
		public void onTimeout(AsyncEvent event) {
			if (settle()) {
				logger.warn("Request to " + ((HttpServletRequest) this.context.getRequest()).getRequestURI()
						+ " was not released within " + GRACE_MILLIS / 1000
						+ " s of its slot and is answered 503; the rateLimitShapingScheduler is stuck or shut down");
				giveUp();
			}
		}

		@Override
		public void onError(AsyncEvent event) {
			if (settle()) {
				this.context.complete();
			}
		}

		@Override
		public void onComplete(AsyncEvent event) {
			settle();
		}

		@Override
		public void onStartAsync(AsyncEvent event) {
		}

		/** Answers 503 and completes the request, which has settled and will not be released. */
		void giveUp() {
			HttpServletResponse response = (HttpServletResponse) this.context.getResponse();
			if (!response.isCommitted()) {
				response.setStatus(HttpStatus.SERVICE_UNAVAILABLE.value());
			}
			this.context.complete();
		}

		/** Cancels the release if it has not run yet; returns whether it had not. */
		boolean settle() {
			if (!this.settled.compareAndSet(false, true)) {
				return false;
			}
			this.held.decrementAndGet();
			Future<?> task = this.task;
			if (task != null) {
				task.cancel(false);
			}
			return true;
		}

	}

}
