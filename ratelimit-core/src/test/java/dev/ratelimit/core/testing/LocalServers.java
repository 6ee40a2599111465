package dev.ratelimit.core.testing;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Map;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.wait.strategy.Wait;
import org.testcontainers.utility.DockerImageName;

/**
 * What the servers of the tests share: they are on this machine only, since tests flush and drop what they find,
 * and a server may be a throwaway container where Testcontainers is on the class path and Docker answers.
 */
final class LocalServers {

	private LocalServers() {
	}

	/**
	 * Whether every address of {@code host} is a loopback address.
	 * @param host a host name or address
	 * @return whether the host is this machine
	 */
	static boolean isLoopback(String host) {
		try {
			for (InetAddress address : InetAddress.getAllByName(host)) {
				if (!address.isLoopbackAddress()) {
					return false;
				}
			}
			return true;
		}
		catch (UnknownHostException ex) {
			return false;
		}
	}

	/**
	 * Skips the current test because {@code reason} keeps it from running, or fails it when the environment
	 * variable {@code required} is {@code true}.
	 * @param server the server the test needs, as its messages name it
	 * @param required the variable that makes a missing server fail the run
	 * @param reason why there is no server
	 */
	static void skipOrFail(String server, String required, String reason) {
		if ("true".equalsIgnoreCase(System.getenv(required))) {
			Assertions.fail(server + " is required (" + required + "=true), but " + reason);
		}
		Assumptions.abort("Needs " + server + ": " + reason);
	}

	/**
	 * Starts a container of {@code image} that exposes {@code port}, on a loopback host.
	 * @param image the image
	 * @param port the port it serves on
	 * @param environment its environment
	 * @param ready a line of its log that says it is ready, or null when an open port says so
	 * @param readyTimes how many times that line appears once it is ready
	 * @return the started container, or null where Testcontainers is missing, Docker does not answer or its host
	 * is not this machine
	 */
	static @Nullable Started container(String image, int port, Map<String, String> environment,
			@Nullable String ready, int readyTimes) {
		try {
			Class.forName("org.testcontainers.DockerClientFactory", false, LocalServers.class.getClassLoader());
		}
		catch (ClassNotFoundException ex) {
			// a module that uses the test servers without Testcontainers on its test class path
			return null;
		}
		return Container.start(image, port, environment, ready, readyTimes);
	}

	/**
	 * A container started for the tests.
	 * @param host where it is reached
	 * @param port its port on that host
	 * @param stop stops it
	 */
	record Started(String host, int port, AutoCloseable stop) {
	}

	/** Holds every reference to Testcontainers, so that it is loaded only when present. */
	private static final class Container {

		static @Nullable Started start(String image, int port, Map<String, String> environment,
				@Nullable String ready, int readyTimes) {
			try {
				if (!DockerClientFactory.instance().isDockerAvailable()) {
					return null;
				}
			}
			catch (Throwable ex) {
				return null;
			}
			GenericContainer<?> container = new GenericContainer<>(DockerImageName.parse(image)).withEnv(environment)
				.withExposedPorts(port);
			if (ready != null) {
				container.waitingFor(Wait.forLogMessage(ready, readyTimes));
			}
			container.start();
			if (!isLoopback(container.getHost())) {
				container.stop();
				return null;
			}
			return new Started(container.getHost(), container.getMappedPort(port), container::stop);
		}

	}

}
