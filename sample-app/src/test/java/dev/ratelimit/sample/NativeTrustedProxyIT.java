package dev.ratelimit.sample;

import org.springframework.test.context.TestPropertySource;

/**
 * A trusted proxy in front of Tomcat's RemoteIpValve.
 */
@TestPropertySource(properties = "server.forward-headers-strategy=native")
class NativeTrustedProxyIT extends AbstractTrustedProxyIT {

}
