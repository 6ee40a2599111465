package dev.ratelimit.sample;

import org.springframework.test.context.TestPropertySource;

/**
 * Tomcat's RemoteIpValve rewrites the remote address of every request from 127/8; the limiter does not follow.
 */
@TestPropertySource(properties = "server.forward-headers-strategy=native")
class NativeStrategyIT extends AbstractForwardedHeadersIT {

}
