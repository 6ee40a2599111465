package dev.ratelimit.spring.redis;

import java.time.Duration;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.ReadFrom;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.SslVerifyMode;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import io.lettuce.core.resource.ClientResources;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * How the executor's own Lettuce client is configured from the application's.
 */
class LettuceClientsTests {

	@Test
	void rejectsCommandsWhileDisconnectedAndBoundsTheConnectTimeoutWhateverTheApplicationConfigured() {
		ClientOptions application = ClientOptions.builder()
			.autoReconnect(false)
			.disconnectedBehavior(ClientOptions.DisconnectedBehavior.ACCEPT_COMMANDS)
			.socketOptions(SocketOptions.builder().connectTimeout(Duration.ofSeconds(10)).build())
			.timeoutOptions(TimeoutOptions.enabled(Duration.ofSeconds(3)))
			.build();
		ClientOptions options = LettuceClients.clientOptions(application);
		assertThat(options.isAutoReconnect()).isTrue();
		assertThat(options.getDisconnectedBehavior()).isEqualTo(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS);
		assertThat(options.getSocketOptions().getConnectTimeout()).isEqualTo(LettuceClients.MAX_CONNECT_TIMEOUT);
		assertThat(options.getTimeoutOptions()).isSameAs(application.getTimeoutOptions());
		assertThat(application.getDisconnectedBehavior()).isEqualTo(ClientOptions.DisconnectedBehavior.ACCEPT_COMMANDS);
		assertThat(application.isAutoReconnect()).isFalse();
	}

	@Test
	void keepsAShorterConnectTimeoutAndTheClusterOptions() {
		ClusterClientOptions application = ClusterClientOptions.builder()
			.maxRedirects(2)
			.socketOptions(SocketOptions.builder().connectTimeout(Duration.ofMillis(300)).build())
			.build();
		ClientOptions options = LettuceClients.clientOptions(application);
		assertThat(options).isInstanceOfSatisfying(ClusterClientOptions.class,
				(cluster) -> assertThat(cluster.getMaxRedirects()).isEqualTo(2));
		assertThat(options.getSocketOptions().getConnectTimeout()).isEqualTo(Duration.ofMillis(300));
		assertThat(options.getDisconnectedBehavior()).isEqualTo(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS);
	}

	@Test
	void followsAClustersTopologyWhateverTheApplicationSet() {
		ClusterClientOptions application = ClusterClientOptions.builder()
			.topologyRefreshOptions(ClusterTopologyRefreshOptions.builder().build())
			.build();
		assertThat(application.getTopologyRefreshOptions().isPeriodicRefreshEnabled()).isFalse();
		assertThat(LettuceClients.clientOptions(application)).isInstanceOfSatisfying(ClusterClientOptions.class,
				(cluster) -> {
					ClusterTopologyRefreshOptions refresh = cluster.getTopologyRefreshOptions();
					assertThat(refresh.getAdaptiveRefreshTriggers())
						.containsExactlyInAnyOrder(ClusterTopologyRefreshOptions.RefreshTrigger.values());
					assertThat(refresh.getAdaptiveRefreshTimeout()).isEqualTo(LettuceClients.MIN_TOPOLOGY_REFRESH);
					assertThat(refresh.isPeriodicRefreshEnabled()).isTrue();
					assertThat(refresh.getRefreshPeriod()).isEqualTo(LettuceClients.TOPOLOGY_REFRESH_PERIOD);
				});
	}

	@Test
	void followsTheTopologyOfAClusterForWhichTheApplicationSetNoOptions() {
		ClientResources resources = LettuceClients.resources();
		try {
			LettuceClientConfiguration own = LettuceClients.clientConfiguration(
					LettuceClientConfiguration.builder().build(), resources, true);
			assertThat(own.getClientOptions()).hasValueSatisfying((options) -> assertThat(options)
				.isInstanceOfSatisfying(ClusterClientOptions.class,
						(cluster) -> assertThat(cluster.getTopologyRefreshOptions().isPeriodicRefreshEnabled())
							.isTrue()));
		}
		finally {
			resources.shutdown();
		}
	}

	@Test
	void keepsTheApplicationsTlsNameReplicasAndTimeoutsOnResourcesOfItsOwn() {
		LettuceClientConfiguration application = LettuceClientConfiguration.builder()
			.useSsl()
			.verifyPeer(SslVerifyMode.CA)
			.startTls()
			.and()
			.clientName("orders")
			.readFrom(ReadFrom.REPLICA_PREFERRED)
			.commandTimeout(Duration.ofSeconds(7))
			.shutdownTimeout(Duration.ofMillis(250))
			.build();
		ClientResources resources = LettuceClients.resources();
		try {
			LettuceClientConfiguration own = LettuceClients.clientConfiguration(application, resources, false);
			assertThat(own.isUseSsl()).isTrue();
			assertThat(own.getVerifyMode()).isEqualTo(SslVerifyMode.CA);
			assertThat(own.isStartTls()).isTrue();
			assertThat(own.getClientName()).contains("orders");
			assertThat(own.getReadFrom()).contains(ReadFrom.REPLICA_PREFERRED);
			assertThat(own.getCommandTimeout()).isEqualTo(Duration.ofSeconds(7));
			assertThat(own.getShutdownTimeout()).isEqualTo(Duration.ofMillis(250));
			assertThat(own.getClientResources()).containsSame(resources);
			assertThat(own.getClientOptions()).hasValueSatisfying((options) -> assertThat(
					options.getDisconnectedBehavior()).isEqualTo(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS));
		}
		finally {
			resources.shutdown();
		}
	}

	@Test
	void reconnectsAtMost200MillisecondsApartHoweverLongTheOutage() {
		ClientResources resources = LettuceClients.resources();
		try {
			assertThat(resources.reconnectDelay().createDelay(1).toMillis()).isLessThanOrEqualTo(10);
			for (long attempt = 1; attempt <= 1000; attempt++) {
				assertThat(resources.reconnectDelay().createDelay(attempt)).isLessThanOrEqualTo(Duration.ofMillis(200));
			}
			assertThat(resources.reconnectDelay().createDelay(1000)).isEqualTo(Duration.ofMillis(200));
		}
		finally {
			resources.shutdown();
		}
	}

}
