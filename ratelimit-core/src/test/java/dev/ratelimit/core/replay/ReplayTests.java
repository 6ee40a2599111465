package dev.ratelimit.core.replay;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import java.util.stream.Stream;

import javax.xml.parsers.DocumentBuilderFactory;

import dev.ratelimit.core.ReferenceFixture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.w3c.dom.NodeList;

import static org.assertj.core.api.Assertions.assertThat;

class ReplayTests {

	private static final String SCENARIO_B = Stream
		.of(IntStream.range(0, 16).mapToObj((i) -> String.valueOf(i * 0.5)), Stream.generate(() -> "9.9").limit(10),
				Stream.generate(() -> "10.1").limit(10), IntStream.range(0, 10).mapToObj((i) -> String.valueOf(15 + i * 0.5)))
		.flatMap((s) -> s)
		.collect(Collectors.joining("\n", "# the article's scenario B\n", "\n"));

	@Test
	void summarisesScenarioBAsTheArticleReports() {
		Result result = replay(SCENARIO_B, "--limit", "10", "--window", "10s", "--summary");
		assertThat(result.status).isZero();
		assertThat(result.err).isEmpty();
		assertThat(result.out).containsPattern("FIXED_WINDOW\\s+46\\s+20\\s+26\\s+19\\s+0.000 s")
			.containsPattern("SLIDING_LOG\\s+46\\s+20\\s+26\\s+10\\s")
			.containsPattern("SLIDING_WINDOW_COUNTER\\s+46\\s+20\\s+26\\s+10\\s")
			.containsPattern("TOKEN_BUCKET\\s+46\\s+29\\s+17\\s+19\\s")
			.containsPattern("LEAKY_BUCKET\\s+46\\s+30\\s+16\\s+10\\s+10.000 s")
			.containsPattern("GCRA\\s+46\\s+29\\s+17\\s+19\\s");
	}

	@Test
	void summarisesScenarioA() {
		String trace = "9.9\n".repeat(10) + "10.1\n".repeat(10);
		Result result = replay(trace, "--limit", "10", "--window", "PT10S", "--summary");
		assertThat(result.out).containsPattern("FIXED_WINDOW\\s+20\\s+20\\s+0\\s")
			.containsPattern("SLIDING_LOG\\s+20\\s+10\\s+10\\s")
			.containsPattern("SLIDING_WINDOW_COUNTER\\s+20\\s+11\\s+9\\s")
			.containsPattern("TOKEN_BUCKET\\s+20\\s+10\\s+10\\s")
			.containsPattern("LEAKY_BUCKET\\s+20\\s+11\\s+9\\s")
			.containsPattern("GCRA\\s+20\\s+10\\s+10\\s");
	}

	@Test
	void printsEveryDecisionAsTheReferenceReplayDoes() {
		ReferenceFixture fixture = ReferenceFixture.load("random-03");
		String trace = fixture.rows()
			.get(dev.ratelimit.core.Algorithm.GCRA)
			.stream()
			.map((row) -> row.time() + " " + row.key())
			.collect(Collectors.joining("\n"));
		Result result = replay(trace, "--limit", "7", "--window", "2500ms");
		List<String> lines = result.out.lines().toList();
		assertThat(lines.get(0)).isEqualTo("algorithm,time,key,allowed,delay");
		List<String> expected = fixture.rows()
			.entrySet()
			.stream()
			.flatMap((entry) -> entry.getValue()
				.stream()
				.map((row) -> String.format(java.util.Locale.ROOT, "%s,%.3f,%s,%s,%.6f", entry.getKey(),
						Double.parseDouble(row.time()), row.key(), row.allowed(), row.delayNanos() / 1e9)))
			.toList();
		assertThat(lines.subList(1, lines.size())).containsExactlyElementsOf(expected);
	}

	@Test
	void appliesTheBurstToTheBucketsOnly() {
		Result result = replay("0\n".repeat(8), "--limit", "10", "--window", "10s", "--burst", "3", "--summary");
		assertThat(result.out).containsPattern("FIXED_WINDOW\\s+8\\s+8\\s")
			.containsPattern("TOKEN_BUCKET\\s+8\\s+3\\s")
			.containsPattern("LEAKY_BUCKET\\s+8\\s+4\\s")
			.containsPattern("GCRA\\s+8\\s+3\\s");
	}

	@Test
	void runsOneAlgorithmWhenAsked() {
		Result result = replay("0 alice\n0 bob\n0 alice\n", "--limit", "1", "--window", "1s", "--algorithm",
				"gcra");
		assertThat(result.out.lines()).containsExactly("algorithm,time,key,allowed,delay",
				"GCRA,0.000,alice,true,0.000000", "GCRA,0.000,bob,true,0.000000", "GCRA,0.000,alice,false,0.000000");
	}

	@Test
	void rejectsAMalformedLineNamingItAndPrintsNoResult() {
		Result result = replay("0\n\n# comment\n1.5 a b\n", "--limit", "10", "--window", "10s");
		assertThat(result.status).isEqualTo(2);
		assertThat(result.out).isEmpty();
		assertThat(result.err).contains("line 4").contains("1.5 a b");
	}

	@Test
	void rejectsATimeThatIsNotANumber() {
		Result result = replay("0\nsoon\n", "--limit", "10", "--window", "10s", "--summary");
		assertThat(result.status).isEqualTo(2);
		assertThat(result.out).isEmpty();
		assertThat(result.err).contains("line 2").contains("'soon'");
	}

	@Test
	void rejectsATimeGoingBackwards() {
		Result result = replay("1\n2\n1.999\n", "--limit", "10", "--window", "10s");
		assertThat(result.status).isEqualTo(2);
		assertThat(result.out).isEmpty();
		assertThat(result.err).contains("line 3").contains("must not decrease");
	}

	@Test
	void rejectsBadArgumentsWithUsage() {
		assertThat(replay("0\n", "--limit", "0", "--window", "10s").err).contains("limit").contains("at least 1");
		assertThat(replay("0\n", "--limit", "10", "--window", "10 parsecs").err).contains("'10 parsecs'");
		assertThat(replay("0\n", "--limit", "10").err).contains("--window").contains("usage:");
		Result unknown = replay("0\n", "--limit", "10", "--window", "1s", "--algorithm", "magic");
		assertThat(unknown.status).isEqualTo(2);
		assertThat(unknown.err).contains("unknown algorithm 'magic'");
	}

	/**
	 * docs/algorithms.md shows docs/images/scenario-b.svg: drawn again from scenario B, it must be that file, so
	 * that the picture changes with the decisions. Redraw it with the command under that page's "The replay tool".
	 */
	@Test
	void drawsScenarioBAsThePictureTheAlgorithmsPageShows(@TempDir Path dir) throws Exception {
		Path svg = dir.resolve("scenario-b.svg");
		Result result = replay(SCENARIO_B, "--limit", "10", "--window", "10s", "--summary", "--svg", svg.toString());
		assertThat(result.status).isZero();
		assertThat(result.out).startsWith("46 requests, limit 10 per 10s");
		String drawn = Files.readString(svg);
		assertThat(drawn).isEqualTo(Files.readString(Path.of("..", "docs", "images", "scenario-b.svg")));
		NodeList texts = DocumentBuilderFactory.newInstance()
			.newDocumentBuilder()
			.parse(svg.toFile())
			.getElementsByTagName("text");
		List<String> lanes = new ArrayList<>();
		for (int i = 0; i < texts.getLength(); i++) {
			lanes.add(texts.item(i).getTextContent());
		}
		assertThat(lanes).contains("FIXED_WINDOW", "20 of 46 allowed", "LEAKY_BUCKET", "30 of 46 allowed", "GCRA",
				"29 of 46 allowed", "30 s");
	}

	/** An hour of requests is labelled every 500 s, not at each of its 361 windows. */
	@Test
	void labelsALongTraceEveryFewWindows(@TempDir Path dir) throws Exception {
		Path svg = dir.resolve("hour.svg");
		String hour = IntStream.rangeClosed(0, 3600).mapToObj(Integer::toString).collect(Collectors.joining("\n"));
		assertThat(replay(hour, "--limit", "10", "--window", "10s", "--svg", svg.toString()).status).isZero();
		String drawn = Files.readString(svg);
		assertThat(drawn).contains(">500 s<", ">3500 s<").doesNotContain(">10 s<");
		assertThat(drawn.split("<line", -1).length - 1).as("lines drawn").isLessThan(100);
	}

	@Test
	void exitsWith2WhenThePictureCannotBeWritten(@TempDir Path dir) {
		Result result = replay(SCENARIO_B, "--limit", "10", "--window", "10s", "--svg",
				dir.resolve("missing").resolve("b.svg").toString());
		assertThat(result.status).isEqualTo(2);
		assertThat(result.err).startsWith("error: cannot read the trace or write the picture: ")
			.doesNotContain("\tat ");
	}

	@Test
	void answersHelpWithItsUsageAndNothingElse() {
		Result help = replay("", "--help");
		assertThat(help.status).isZero();
		assertThat(help.out).startsWith("usage: java -jar ratelimit-core.jar --limit N --window DURATION")
			.contains("--summary ", "--help, -h");
		assertThat(help.err).isEmpty();
		assertThat(replay("", "--limit", "10", "-h").status).isZero();
	}

	private static Result replay(String trace, String... args) {
		ByteArrayOutputStream out = new ByteArrayOutputStream();
		ByteArrayOutputStream err = new ByteArrayOutputStream();
		int status = Replay.run(args, new StringReader(trace), new PrintStream(out, true, StandardCharsets.UTF_8),
				new PrintStream(err, true, StandardCharsets.UTF_8));
		return new Result(status, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
	}

	private record Result(int status, String out, String err) {
	}

}
