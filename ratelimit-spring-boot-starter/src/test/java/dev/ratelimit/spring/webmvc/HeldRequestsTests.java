package dev.ratelimit.spring.webmvc;

import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.ScheduledThreadPoolExecutor;

import dev.ratelimit.core.ManualTimeSource;
import dev.ratelimit.core.testing.ManualScheduler;
import dev.ratelimit.spring.autoconfigure.RateLimitAutoConfiguration;
import jakarta.servlet.AsyncEvent;
import jakarta.servlet.AsyncListener;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.mock.web.MockAsyncContext;
import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.mock.web.MockHttpServletResponse;
import org.springframework.mock.web.MockPart;
import org.springframework.web.multipart.support.StandardMultipartHttpServletRequest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * Tests of holding a request until its slot, on mock requests and a manual clock.
 */
class HeldRequestsTests {

	private final ManualTimeSource time = new ManualTimeSource();

	private final ManualScheduler scheduler = new ManualScheduler(this.time);

	private final HeldRequests held = new HeldRequests(this.scheduler);

	private final MockHttpServletRequest request = new MockHttpServletRequest("GET", "/queued");

	private final MockHttpServletResponse response = new MockHttpServletResponse();

	HeldRequestsTests() {
		this.request.setAsyncSupported(true);
	}

	@Test
	void dispatchesTheRequestAgainWhenItsSlotComes() {
		this.held.hold(this.request, this.response, Duration.ofMillis(1500).toNanos());
		assertThat(this.request.isAsyncStarted()).isTrue();
		assertThat(this.scheduler.advance(Duration.ofMillis(1499))).isZero();
		assertThat(context().getDispatchedPath()).isNull();
		assertThat(this.scheduler.advance(Duration.ofMillis(1))).isOne();
		assertThat(context().getDispatchedPath()).isEqualTo("/queued");
	}

	@Test
	void givesTheContainerTheDelayAndAGraceAsTimeout() {
		this.held.hold(this.request, this.response, Duration.ofMillis(2500).toNanos());
		assertThat(context().getTimeout()).isEqualTo(2500 + HeldRequests.GRACE_MILLIS);
	}

	@Test
	void cancelsTheReleaseWhenTheClientGoesAway() throws IOException {
		this.held.hold(this.request, this.response, Duration.ofSeconds(2).toNanos());
		listener().onError(new AsyncEvent(context(), new IOException("Connection reset by peer")));
		assertThat(this.scheduler.pending()).isZero();
		assertThat(this.request.isAsyncStarted()).isFalse();
		this.scheduler.advance(Duration.ofSeconds(2));
		assertThat(context().getDispatchedPath()).isNull();
	}

	@Test
	void cancelsTheReleaseWhenTheContainerCompletesTheRequest() {
		this.held.hold(this.request, this.response, Duration.ofSeconds(2).toNanos());
		context().complete();
		assertThat(this.scheduler.pending()).isZero();
	}

	@Test
	void answers503WhenTheReleaseComesTooLate() throws IOException {
		this.held.hold(this.request, this.response, Duration.ofSeconds(2).toNanos());
		listener().onTimeout(new AsyncEvent(context()));
		assertThat(this.response.getStatus()).isEqualTo(503);
		assertThat(this.request.isAsyncStarted()).isFalse();
		assertThat(this.scheduler.pending()).isZero();
	}

	@Test
	void leavesNothingBehindInTheAutoConfiguredSchedulerWhenARequestEnds() {
		new WebApplicationContextRunner().withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class))
			.run((context) -> {
				ScheduledThreadPoolExecutor executor = context
					.getBean(RateLimitAutoConfiguration.SHAPING_SCHEDULER_BEAN_NAME, ScheduledThreadPoolExecutor.class);
				new HeldRequests(executor).hold(this.request, this.response, Duration.ofMinutes(10).toNanos());
				assertThat(executor.getQueue()).hasSize(1);
				context().complete();
				assertThat(executor.getQueue()).isEmpty();
			});
	}

	@Test
	void answers503WhenTheSchedulerIsShutDown() {
		this.scheduler.shutdown();
		this.held.hold(this.request, this.response, Duration.ofSeconds(1).toNanos());
		assertThat(this.response.getStatus()).isEqualTo(503);
		assertThat(this.request.isAsyncStarted()).isFalse();
		assertThat(this.held.count()).isZero();
	}

	@Test
	void countsTheRequestsHeldUntilEachIsReleasedOrEnds() throws IOException {
		MockHttpServletRequest[] requests = new MockHttpServletRequest[4];
		for (int i = 0; i < requests.length; i++) {
			requests[i] = new MockHttpServletRequest("GET", "/queued/" + i);
			requests[i].setAsyncSupported(true);
			this.held.hold(requests[i], new MockHttpServletResponse(), Duration.ofSeconds(1 + i).toNanos());
		}
		assertThat(this.held.count()).isEqualTo(4);
		this.scheduler.advance(Duration.ofSeconds(1));
		assertThat(this.held.count()).as("after one release").isEqualTo(3);
		requests[1].getAsyncContext().complete();
		assertThat(this.held.count()).as("after the container completed one").isEqualTo(2);
		MockAsyncContext erred = (MockAsyncContext) requests[2].getAsyncContext();
		erred.getListeners().get(0).onError(new AsyncEvent(erred, new IOException("Connection reset by peer")));
		assertThat(this.held.count()).as("after a client went away").isEqualTo(1);
		MockAsyncContext late = (MockAsyncContext) requests[3].getAsyncContext();
		late.getListeners().get(0).onTimeout(new AsyncEvent(late));
		assertThat(this.held.count()).as("after a timeout").isZero();
		this.scheduler.advance(Duration.ofSeconds(10));
		assertThat(this.held.count()).isZero();
	}

	@Test
	void refusesARequestThatCannotBeAsynchronous() {
		this.request.setAsyncSupported(false);
		assertThatIllegalStateException()
			.isThrownBy(() -> this.held.hold(this.request, this.response, Duration.ofSeconds(1).toNanos()))
			.withMessageContaining("asyncSupported = true");
		assertThat(this.scheduler.pending()).isZero();
	}

	@Test
	void refusesAMultipartRequestWhoseBodySpringMvcHasAlreadyParsed() {
		this.request.setContentType("multipart/form-data");
		this.request.addPart(new MockPart("file", "upload.bin", new byte[] { 1 }));
		StandardMultipartHttpServletRequest multipart = new StandardMultipartHttpServletRequest(this.request);
		assertThatIllegalStateException()
			.isThrownBy(() -> this.held.hold(multipart, this.response, Duration.ofSeconds(1).toNanos()))
			.withMessageContaining("spring.servlet.multipart.resolve-lazily=true");
	}

	private MockAsyncContext context() {
		return (MockAsyncContext) this.request.getAsyncContext();
	}

	private AsyncListener listener() {
		return context().getListeners().get(0);
	}

}
