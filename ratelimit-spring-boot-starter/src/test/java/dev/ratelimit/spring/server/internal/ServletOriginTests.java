package dev.ratelimit.spring.server.internal;

import java.util.List;

import dev.ratelimit.spring.web.internal.ClientAddresses;
import jakarta.servlet.http.HttpServletRequest;
import org.junit.jupiter.api.Test;

import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.mock.web.MockHttpServletResponse;
import org.springframework.web.filter.ForwardedHeaderFilter;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A servlet request's origin, on either web stack, is what the connection delivered, whatever a wrapper or a
 * valve made of the request's address and headers.
 */
class ServletOriginTests {

	@Test
	void readsTheAddressAndHeadersUnderEveryWrapper() throws Exception {
		MockHttpServletRequest received = new MockHttpServletRequest();
		received.setRemoteAddr("10.0.0.1");
		received.addHeader("X-Forwarded-For", "198.51.100.1");
		HttpServletRequest[] wrapped = new HttpServletRequest[1];
		new ForwardedHeaderFilter().doFilter(received, new MockHttpServletResponse(),
				(request, response) -> wrapped[0] = (HttpServletRequest) request);
		// the filter trusts every client, and hides the header
		assertThat(wrapped[0].getRemoteAddr()).isEqualTo("198.51.100.1");
		assertThat(wrapped[0].getHeader("X-Forwarded-For")).isNull();
		assertThat(ServletOrigin.of(wrapped[0]))
			.isEqualTo(new ClientAddresses.Origin("10.0.0.1", List.of(), List.of("198.51.100.1")));
	}

	@Test
	void prefersTheOriginThatTheValveRecorded() {
		MockHttpServletRequest request = new MockHttpServletRequest();
		request.setRemoteAddr("198.51.100.66");
		ClientAddresses.Origin recorded = new ClientAddresses.Origin("10.0.0.1", List.of(), List.of("198.51.100.1"));
		request.setAttribute(ServletOrigin.ATTRIBUTE, recorded);
		assertThat(ServletOrigin.of(request)).isSameAs(recorded);
	}

}
