package dev.ratelimit.spring.redis;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.Delay;
import io.lettuce.core.resource.DefaultClientResources;

import org.springframework.data.redis.connection.RedisClusterConfiguration;
import org.springframework.data.redis.connection.RedisConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration.LettuceClientConfigurationBuilder;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * Builds a Lettuce connection factory for the same Redis as an application's {@link LettuceConnectionFactory}
 * (standalone, Unix socket, Sentinel or Cluster, with the same credentials, TLS, database, client name and
 * command timeout), whose client the rate limiter alone uses: it rejects commands while disconnected instead of
 * queueing them for replay, reconnects within {@link #MAX_RECONNECT_DELAY} of Redis accepting connections again,
 * and gives up a connection attempt after at most {@link #MAX_CONNECT_TIMEOUT}. On a Cluster it follows the
 * topology whatever the application set: at once on every sign that the topology changed (a redirection, a
 * slot nobody serves, a node it cannot reconnect to), at most once per {@link #MIN_TOPOLOGY_REFRESH}, and every
 * {@link #TOPOLOGY_REFRESH_PERIOD} besides, so that a failover moves its decisions to the new primary rather
 * than leaving the dead primary's slots on the failure policy until it comes back.
 */
final class LettuceClients {

	/** First wait before reconnecting, doubled after each failed attempt up to {@link #MAX_RECONNECT_DELAY}. */
	static final Duration MIN_RECONNECT_DELAY = Duration.ofMillis(5);

	/**
	 * Longest wait between reconnection attempts, and so about the longest a restarted Redis waits for the
	 * rate limiter: Lettuce's own default grows to 30 s.
	 */
	static final Duration MAX_RECONNECT_DELAY = Duration.ofMillis(200);

	/**
	 * Longest a connection attempt may take. A Redis that drops connection attempts holds up each reconnection
	 * this long; one that takes longer to connect to answers no decision within a rate limiter's timeout anyway.
	 */
	static final Duration MAX_CONNECT_TIMEOUT = Duration.ofSeconds(1);

	/** The shortest time between two refreshes of a Cluster's topology that a sign of change starts. */
	static final Duration MIN_TOPOLOGY_REFRESH = Duration.ofMillis(500);

	/** How often the topology of a Cluster is read again without a sign of change. */
	static final Duration TOPOLOGY_REFRESH_PERIOD = Duration.ofSeconds(5);

	/** Failed reconnection attempts to one node after which the topology is read again. */
	private static final int RECONNECTS_BEFORE_REFRESH = 3;

	private LettuceClients() {
	}

	/** Client resources of the rate limiter's own, to shut down once its connection factory is destroyed. */
	static ClientResources resources() {
		return DefaultClientResources.builder()
			.reconnectDelay(Delay.exponential(MIN_RECONNECT_DELAY, MAX_RECONNECT_DELAY, 2, TimeUnit.MILLISECONDS))
			.build();
	}

	/** A factory, not yet started, on the given resources for the Redis that {@code application} reaches. */
	static LettuceConnectionFactory create(LettuceConnectionFactory application, ClientResources resources) {
		RedisConfiguration configuration = configuration(application);
		return new LettuceConnectionFactory(configuration, clientConfiguration(application.getClientConfiguration(),
				resources, configuration instanceof RedisClusterConfiguration));
	}

	private static RedisConfiguration configuration(LettuceConnectionFactory application) {
		if (application.getClusterConfiguration() != null) {
			return application.getClusterConfiguration();
		}
		if (application.getSentinelConfiguration() != null) {
			return application.getSentinelConfiguration();
		}
		if (application.getSocketConfiguration() != null) {
			return application.getSocketConfiguration();
		}
		return application.getStandaloneConfiguration();
	}

	static LettuceClientConfiguration clientConfiguration(LettuceClientConfiguration application,
			ClientResources resources, boolean cluster) {
		LettuceClientConfigurationBuilder builder = LettuceClientConfiguration.builder();
		if (application.isUseSsl()) {
			LettuceClientConfiguration.LettuceSslClientConfigurationBuilder ssl = builder.useSsl()
				.verifyPeer(application.getVerifyMode());
			if (application.isStartTls()) {
				ssl.startTls();
			}
			builder = ssl.and();
		}
		application.getClientName().ifPresent(builder::clientName);
		application.getReadFrom().ifPresent(builder::readFrom);
		application.getRedisCredentialsProviderFactory().ifPresent(builder::redisCredentialsProviderFactory);
		return builder.clientResources(resources)
			.clientOptions(
					clientOptions(cluster(application.getClientOptions().orElseGet(ClientOptions::create), cluster)))
			.commandTimeout(application.getCommandTimeout())
			.shutdownTimeout(application.getShutdownTimeout())
			.shutdownQuietPeriod(application.getShutdownQuietPeriod())
			.build();
	}

	/** The application's options, as cluster options on a Cluster, where they carry the topology refresh. */
	private static ClientOptions cluster(ClientOptions application, boolean cluster) {
		return (cluster && !(application instanceof ClusterClientOptions))
				? ClusterClientOptions.builder(application).build() : application;
	}

	/**
	 * The application's options, with the rate limiter's reconnection; cluster options stay cluster options,
	 * with the rate limiter's topology refresh.
	 */
	static ClientOptions clientOptions(ClientOptions application) {
		SocketOptions socket = application.getSocketOptions();
		Duration connectTimeout = (socket.getConnectTimeout().compareTo(MAX_CONNECT_TIMEOUT) < 0)
				? socket.getConnectTimeout() : MAX_CONNECT_TIMEOUT;
		SocketOptions bounded = socket.mutate().connectTimeout(connectTimeout).build();
		if (application instanceof ClusterClientOptions cluster) {
			return cluster.mutate()
				.topologyRefreshOptions(ClusterTopologyRefreshOptions.builder()
					.enableAllAdaptiveRefreshTriggers()
					.adaptiveRefreshTriggersTimeout(MIN_TOPOLOGY_REFRESH)
					.refreshTriggersReconnectAttempts(RECONNECTS_BEFORE_REFRESH)
					.enablePeriodicRefresh(TOPOLOGY_REFRESH_PERIOD)
					.build())
				.autoReconnect(true)
				.disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
				.socketOptions(bounded)
				.build();
		}
		return application.mutate()
			.autoReconnect(true)
			.disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
			.socketOptions(bounded)
			.build();
	}

}
