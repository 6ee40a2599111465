package dev.ratelimit.sample;

import org.springframework.test.context.TestPropertySource;

/**
 * A trusted proxy in front of Spring's ForwardedHeaderFilter.
 */
@TestPropertySource(properties = "server.forward-headers-strategy=framework")
class FrameworkTrustedProxyIT extends AbstractTrustedProxyIT {

}
