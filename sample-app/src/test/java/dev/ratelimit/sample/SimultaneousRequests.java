package dev.ratelimit.sample;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import dev.ratelimit.core.testing.ManualScheduler;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Sends requests to the sample without waiting for their answers, and tells apart those answered at once from
 * those held for their slot. Every wait is bounded; none of them moves the clock.
 */
final class SimultaneousRequests {

	static final Duration WAIT = Duration.ofSeconds(30);

	private final HttpClient http = HttpClient.newHttpClient();

	private final BlockingQueue<HttpResponse<String>> responses = new LinkedBlockingQueue<>();

	private final int port;

	private final ManualScheduler scheduler;

	SimultaneousRequests(int port, ManualScheduler scheduler) {
		this.port = port;
		this.scheduler = scheduler;
	}

	/**
	 * Sends {@code count} requests at once, with the given header names and values, and returns the answers of
	 * those that were not held, once every request was either answered or held.
	 */
	List<HttpResponse<String>> send(String path, int count, String... headers) throws InterruptedException {
		int held = this.scheduler.pending();
		HttpRequest.Builder builder = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.port + path));
		HttpRequest request = ((headers.length > 0) ? builder.headers(headers) : builder).build();
		for (int i = 0; i < count; i++) {
			this.http.sendAsync(request, HttpResponse.BodyHandlers.ofString()).thenAccept(this.responses::add);
		}
		List<HttpResponse<String>> answered = new ArrayList<>();
		long deadline = System.nanoTime() + WAIT.toNanos();
		while (answered.size() + this.scheduler.pending() - held < count) {
			HttpResponse<String> response = this.responses.poll(10, TimeUnit.MILLISECONDS);
			if (response != null) {
				answered.add(response);
			}
			assertThat(System.nanoTime()).as("every request answered or held in time").isLessThan(deadline);
		}
		return answered;
	}

	/** Returns the next answer, such as that of a request just released. */
	HttpResponse<String> next() throws InterruptedException {
		HttpResponse<String> response = this.responses.poll(WAIT.toSeconds(), TimeUnit.SECONDS);
		assertThat(response).as("an answer in time").isNotNull();
		return response;
	}

	/** Returns whether no answer arrived since the last one taken. */
	boolean noneAnswered() {
		return this.responses.isEmpty();
	}

}
