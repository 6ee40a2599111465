package dev.ratelimit.sample;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

import org.jspecify.annotations.Nullable;

/**
 * Sends HTTP/1.1 requests to the sample on the loopback interface from a chosen loopback address, such as
 * {@code 127.0.0.2}, so that a test can play several clients that the server tells apart by their socket
 * address, as it would on a network. The JDK's HTTP client cannot choose its local address.
 */
final class LoopbackClient {

	private static final int TIMEOUT_MILLIS = 10_000;

	private final InetAddress local;

	private final int port;

	/**
	 * @param local the client's address, in 127.0.0.0/8
	 * @param port the sample's port on 127.0.0.1
	 */
	LoopbackClient(String local, int port) {
		try {
			this.local = InetAddress.getByName(local);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		if (!this.local.isLoopbackAddress()) {
			throw new IllegalArgumentException(local + " is not a loopback address");
		}
		this.port = port;
	}

	/**
	 * Sends {@code GET path} with the given headers, each a name and a value in turn, and reads the whole
	 * response.
	 */
	Response get(String path, String... headers) {
		if (headers.length % 2 != 0) {
			throw new IllegalArgumentException("headers come in name and value pairs");
		}
		StringBuilder request = new StringBuilder("GET ").append(path)
			.append(" HTTP/1.1\r\nHost: 127.0.0.1:")
			.append(this.port)
			.append("\r\nConnection: close\r\n");
		for (int i = 0; i < headers.length; i += 2) {
			request.append(headers[i]).append(": ").append(headers[i + 1]).append("\r\n");
		}
		request.append("\r\n");
		try (Socket socket = new Socket()) {
			socket.setSoTimeout(TIMEOUT_MILLIS);
			socket.bind(new InetSocketAddress(this.local, 0));
			socket.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), this.port), TIMEOUT_MILLIS);
			OutputStream out = socket.getOutputStream();
			out.write(request.toString().getBytes(StandardCharsets.ISO_8859_1));
			out.flush();
			return Response.read(socket.getInputStream());
		}
		catch (IOException ex) {
			throw new UncheckedIOException("GET " + path + " from " + this.local.getHostAddress(), ex);
		}
	}

	/**
	 * A response: its status, its headers by name ignoring case, and its body as text.
	 */
	record Response(int status, Map<String, List<String>> headers, String body) {

		@Nullable String header(String name) {
			List<String> values = this.headers.get(name);
			return (values == null) ? null : values.get(0);
		}

		private static Response read(InputStream in) throws IOException {
			ByteArrayOutputStream all = new ByteArrayOutputStream();
			in.transferTo(all);
			// one char per byte, so that chunk sizes count what they count
			String text = all.toString(StandardCharsets.ISO_8859_1);
			int end = text.indexOf("\r\n\r\n");
			if (end < 0) {
				throw new IOException("no complete response head in: " + text);
			}
			String[] lines = text.substring(0, end).split("\r\n");
			int status = Integer.parseInt(lines[0].split(" ")[1]);
			Map<String, List<String>> headers = new TreeMap<>(String.CASE_INSENSITIVE_ORDER);
			for (int i = 1; i < lines.length; i++) {
				int colon = lines[i].indexOf(':');
				headers.computeIfAbsent(lines[i].substring(0, colon).trim(), (name) -> new ArrayList<>())
					.add(lines[i].substring(colon + 1).trim());
			}
			String body = text.substring(end + 4);
			String encoding = (headers.containsKey("Transfer-Encoding"))
					? headers.get("Transfer-Encoding").get(0).toLowerCase(Locale.ROOT) : "";
			String raw = encoding.equals("chunked") ? unchunk(body) : body;
			return new Response(status, headers,
					new String(raw.getBytes(StandardCharsets.ISO_8859_1), StandardCharsets.UTF_8));
		}

		private static String unchunk(String body) {
			StringBuilder text = new StringBuilder();
			int at = 0;
			for (;;) {
				int lineEnd = body.indexOf("\r\n", at);
				int size = Integer.parseInt(body.substring(at, lineEnd).split(";")[0].trim(), 16);
				if (size == 0) {
					return text.toString();
				}
				text.append(body, lineEnd + 2, lineEnd + 2 + size);
				at = lineEnd + 2 + size + 2;
			}
		}

	}

}
