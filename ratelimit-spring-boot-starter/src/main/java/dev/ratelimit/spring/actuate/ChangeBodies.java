package dev.ratelimit.spring.actuate;

import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;

import org.jspecify.annotations.Nullable;
import tools.jackson.core.JacksonException;
import tools.jackson.core.JsonGenerator;
import tools.jackson.core.JsonParser;
import tools.jackson.core.JsonToken;
import tools.jackson.core.ObjectReadContext;
import tools.jackson.core.ObjectWriteContext;
import tools.jackson.core.json.JsonFactory;

import org.springframework.http.HttpStatus;

/**
 * Reads the body of a change of the {@link RateLimitEndpoint ratelimit} endpoint as it was written, before
 * Spring Boot Actuator reads it into strings: a limit or a burst written as a string ({@code "5"}), a window
 * written as anything but a string, or a field written twice, is a typo an operator makes during an incident,
 * which the Actuator would read as if it were right (the last of two fields wins). Such a body is refused with a
 * 400 whose detail names the fields.
 */
final class ChangeBodies {

	/** The fields whose value is a JSON number, an integer. */
	private static final Set<String> NUMBERS = Set.of("limit", "burst");

	/** The fields whose value is a JSON string. */
	private static final Set<String> STRINGS = Set.of("window");

	private static final JsonFactory JSON = new JsonFactory();

	private ChangeBodies() {
	}

	/**
	 * Returns why the body of a change is refused, or null if the Actuator may read it; a body that is no JSON
	 * object is the Actuator's to refuse.
	 */
	static @Nullable String refusal(byte[] body) {
		Set<String> seen = new LinkedHashSet<>();
		Set<String> twice = new LinkedHashSet<>();
		Set<String> wrong = new LinkedHashSet<>();
		try (JsonParser parser = JSON.createParser(ObjectReadContext.empty(), body)) {
			if (parser.nextToken() != JsonToken.START_OBJECT) {
				return null;
			}
			for (JsonToken token = parser.nextToken(); token == JsonToken.PROPERTY_NAME; token = parser.nextToken()) {
				String name = parser.currentName();
				JsonToken value = parser.nextToken();
				if (!seen.add(name)) {
					twice.add(name);
				}
				if (value != JsonToken.VALUE_NULL && ((NUMBERS.contains(name) && value != JsonToken.VALUE_NUMBER_INT)
						|| (STRINGS.contains(name) && value != JsonToken.VALUE_STRING))) {
					wrong.add(name);
				}
				parser.skipChildren();
			}
		}
		catch (JacksonException ex) {
			return null;
		}
		StringBuilder refusal = new StringBuilder();
		for (String name : wrong) {
			refusal.append((refusal.length() == 0) ? "" : "; ")
				.append(NUMBERS.contains(name) ? name + " must be a JSON number, such as 5, not a string"
						: name + " must be a JSON string, such as \"10s\"");
		}
		if (!twice.isEmpty()) {
			refusal.append((refusal.length() == 0) ? "" : "; ")
				.append("each field may be given once: ")
				.append(String.join(", ", twice))
				.append((twice.size() == 1) ? " is" : " are")
				.append(" given more than once");
		}
		return (refusal.length() == 0) ? null : "Invalid change: " + refusal + ". Nothing changed.";
	}

	/** The problem body of a refusal, as the endpoint's other problems are written. */
	static byte[] problem(String detail) {
		StringWriter out = new StringWriter();
		try (JsonGenerator json = JSON.createGenerator(ObjectWriteContext.empty(), out)) {
			json.writeStartObject();
			for (Map.Entry<String, Object> field : RateLimitEndpointWebExtension
				.problemBody(HttpStatus.BAD_REQUEST, detail)
				.entrySet()) {
				json.writeName(field.getKey());
				if (field.getValue() instanceof Integer number) {
					json.writeNumber(number);
				}
				else {
					json.writeString(String.valueOf(field.getValue()));
				}
			}
			json.writeEndObject();
		}
		return out.toString().getBytes(StandardCharsets.UTF_8);
	}

}
