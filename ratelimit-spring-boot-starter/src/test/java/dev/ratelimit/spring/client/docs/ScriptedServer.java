package dev.ratelimit.spring.client.docs;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;

/**
 * A loopback HTTP server that answers with the responses it was given, in order, and records what it received.
 */
final class ScriptedServer implements AutoCloseable {

	static {
		// The JDK server writes headers and body separately; without TCP_NODELAY each response waits for a
		// delayed ACK.
		System.setProperty("sun.net.httpserver.nodelay", "true");
	}

	private final HttpServer httpServer;

	private final Deque<Reply> replies = new ArrayDeque<>();

	private final List<String> received = new ArrayList<>();

	ScriptedServer() throws IOException {
		this.httpServer = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
		this.httpServer.createContext("/", this::handle);
		this.httpServer.start();
	}

	ScriptedServer reply(int status, String body, String... headerNamesAndValues) {
		Map<String, String> headers = new LinkedHashMap<>();
		for (int i = 0; i < headerNamesAndValues.length; i += 2) {
			headers.put(headerNamesAndValues[i], headerNamesAndValues[i + 1]);
		}
		synchronized (this) {
			this.replies.add(new Reply(status, body, headers));
		}
		return this;
	}

	String url() {
		InetSocketAddress address = this.httpServer.getAddress();
		return "http://" + address.getAddress().getHostAddress() + ":" + address.getPort();
	}

	/** Each request received, as {@code METHOD /path body}. */
	synchronized List<String> received() {
		return List.copyOf(this.received);
	}

	@Override
	public void close() {
		this.httpServer.stop(0);
	}

	private void handle(HttpExchange exchange) throws IOException {
		try (exchange) {
			String body = new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
			Reply reply;
			synchronized (this) {
				this.received.add((exchange.getRequestMethod() + " " + exchange.getRequestURI() + " " + body).strip());
				reply = this.replies.isEmpty() ? new Reply(500, "unexpected request", Map.of()) : this.replies.remove();
			}
			reply.headers().forEach(exchange.getResponseHeaders()::set);
			byte[] bytes = reply.body().getBytes(StandardCharsets.UTF_8);
			exchange.sendResponseHeaders(reply.status(), (bytes.length > 0) ? bytes.length : -1);
			if (bytes.length > 0) {
				try (OutputStream out = exchange.getResponseBody()) {
					out.write(bytes);
				}
			}
		}
	}

	private record Reply(int status, String body, Map<String, String> headers) {
	}

}
