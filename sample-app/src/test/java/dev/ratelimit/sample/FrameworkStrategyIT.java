package dev.ratelimit.sample;

import org.springframework.test.context.TestPropertySource;

/**
 * Spring's ForwardedHeaderFilter wraps every request in one whose remote address is the header's; the limiter
 * does not follow.
 */
@TestPropertySource(properties = "server.forward-headers-strategy=framework")
class FrameworkStrategyIT extends AbstractForwardedHeadersIT {

}
