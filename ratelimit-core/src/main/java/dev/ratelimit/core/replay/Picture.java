package dev.ratelimit.core.replay;

import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Draws the decisions of a replay as an SVG picture: one lane per algorithm on a shared time axis, each request
 * a mark at its arrival, green where it was allowed, a red cross where it was refused, and for a request the
 * leaky bucket held, an amber line from its arrival to the instant it was served. The same decisions always
 * give the same text, byte for byte.
 */
final class Picture {

	/** The width GitHub gives a README's images. */
	private static final int WIDTH = 880;

	private static final int LABELS = 240;

	private static final int MARGIN = 20;

	private static final int TOP = 70;

	private static final int LANE = 64;

	/** The most labelled lines across the picture. */
	private static final int LABELLED_LINES = 10;

	/** The vertical step between requests that arrive at the same instant. */
	private static final int STACK = 4;

	private static final String ALLOWED = "#2e7d32";

	private static final String REFUSED = "#c62828";

	private static final String DELAYED = "#ef8f00";

	private Picture() {
	}

	/** One request of a lane: when it arrived, whether it was allowed, and how long it was held. */
	record Mark(long arrivalNanos, boolean allowed, long delayNanos) {
	}

	/** One algorithm's decisions. */
	record Lane(String name, List<Mark> marks) {
	}

	/**
	 * Draws the lanes under {@code title}, with a labelled vertical line at every multiple of {@code windowNanos},
	 * or of a few windows for a long trace.
	 */
	static String svg(String title, List<Lane> lanes, long windowNanos) {
		long last = windowNanos;
		for (Lane lane : lanes) {
			for (Mark mark : lane.marks) {
				last = Math.max(last, mark.arrivalNanos + mark.delayNanos);
			}
		}
		long end = (last / windowNanos + 1) * windowNanos;
		int height = TOP + lanes.size() * LANE + 40;
		StringBuilder svg = new StringBuilder();
		svg.append(String.format(Locale.ROOT, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
				+ "viewBox=\"0 0 %d %d\" font-family=\"-apple-system, 'Segoe UI', Helvetica, Arial, sans-serif\" "
				+ "font-size=\"13\">\n", WIDTH, height, WIDTH, height));
		svg.append(String.format(Locale.ROOT, "<rect width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>\n", WIDTH, height));
		svg.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"24\" font-size=\"15\" font-weight=\"600\" "
				+ "fill=\"#24292f\">%s</text>\n", MARGIN, escape(title)));
		legend(svg);
		Axis axis = new Axis(end);
		long labelled = labelled(windowNanos, end);
		for (long t = 0; t <= end; t += labelled / 10) {
			boolean boundary = t % labelled == 0;
			double x = axis.x(t);
			svg.append(String.format(Locale.ROOT,
					"<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"%s\"%s/>\n", x, TOP - 8, x,
					TOP + lanes.size() * LANE, boundary ? "#8c959f" : "#eaeef2",
					boundary ? " stroke-dasharray=\"4 3\"" : ""));
			if (boundary) {
				svg.append(String.format(Locale.ROOT, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\" "
						+ "fill=\"#57606a\">%s s</text>\n", x, TOP + lanes.size() * LANE + 18,
						seconds(t)));
			}
		}
		for (int i = 0; i < lanes.size(); i++) {
			lane(svg, axis, lanes.get(i), TOP + i * LANE);
		}
		svg.append("</svg>\n");
		return svg.toString();
	}

	/**
	 * The span between two labelled lines: a window, or as many windows (2, 5, 10, 20, 50...) as keep the
	 * labels to at most {@value #LABELLED_LINES}, so that a long trace's picture stays readable and small.
	 */
	private static long labelled(long windowNanos, long endNanos) {
		for (long windows = 1;; windows *= 10) {
			for (long step : new long[] { windows, 2 * windows, 5 * windows }) {
				if (endNanos / (step * windowNanos) <= LABELLED_LINES) {
					return step * windowNanos;
				}
			}
		}
	}

	private static void legend(StringBuilder svg) {
		int y = 46;
		svg.append(String.format(Locale.ROOT, "<circle cx=\"%d\" cy=\"%d\" r=\"3.5\" fill=\"%s\"/>\n", MARGIN + 4,
				y - 4, ALLOWED));
		svg.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" fill=\"#24292f\">allowed</text>\n",
				MARGIN + 14, y));
		cross(svg, MARGIN + 94, y - 4);
		svg.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" fill=\"#24292f\">refused</text>\n",
				MARGIN + 104, y));
		svg.append(String.format(Locale.ROOT, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" "
				+ "stroke-width=\"2\"/>\n", MARGIN + 180, y - 4, MARGIN + 204, y - 4, DELAYED));
		svg.append(String.format(Locale.ROOT, "<circle cx=\"%d\" cy=\"%d\" r=\"3.5\" fill=\"%s\"/>\n", MARGIN + 204,
				y - 4, DELAYED));
		svg.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" fill=\"#24292f\">held, then served "
				+ "(leaky bucket)</text>\n", MARGIN + 214, y));
	}

	private static void lane(StringBuilder svg, Axis axis, Lane lane, int top) {
		long allowed = lane.marks.stream().filter(Mark::allowed).count();
		svg.append(String.format(Locale.ROOT, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#d0d7de\"/>\n",
				MARGIN, top + LANE, WIDTH - MARGIN, top + LANE));
		svg.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" font-weight=\"600\" fill=\"#24292f\">%s"
				+ "</text>\n", MARGIN, top + 26, escape(lane.name)));
		svg.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" fill=\"#57606a\">%d of %d allowed</text>\n",
				MARGIN, top + 44, allowed, lane.marks.size()));
		Map<Long, Integer> atInstant = new HashMap<>();
		for (Mark mark : lane.marks) {
			int stacked = atInstant.merge(mark.arrivalNanos, 1, Integer::sum) - 1;
			double x = axis.x(mark.arrivalNanos);
			int y = top + 12 + (stacked % 11) * STACK;
			if (!mark.allowed) {
				cross(svg, x, y);
			}
			else if (mark.delayNanos > 0) {
				double served = axis.x(mark.arrivalNanos + mark.delayNanos);
				svg.append(String.format(Locale.ROOT, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" "
						+ "stroke=\"%s\" stroke-opacity=\"0.6\"/>\n", x, y, served, y, DELAYED));
				svg.append(String.format(Locale.ROOT, "<circle cx=\"%.1f\" cy=\"%d\" r=\"3\" fill=\"%s\"/>\n", served,
						y, DELAYED));
			}
			else {
				svg.append(String.format(Locale.ROOT, "<circle cx=\"%.1f\" cy=\"%d\" r=\"3\" fill=\"%s\"/>\n", x, y,
						ALLOWED));
			}
		}
	}

	private static void cross(StringBuilder svg, double x, double y) {
		svg.append(String.format(Locale.ROOT, "<path d=\"M%.1f %.1fl5 5m0 -5l-5 5\" stroke=\"%s\" "
				+ "stroke-width=\"1.6\"/>\n", x - 2.5, y - 2.5, REFUSED));
	}

	private static String seconds(long nanos) {
		return (nanos % 1_000_000_000L == 0) ? Long.toString(nanos / 1_000_000_000L)
				: String.format(Locale.ROOT, "%.1f", nanos / 1e9);
	}

	private static String escape(String text) {
		return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;");
	}

	/** Where an instant lies across the picture. */
	private record Axis(long endNanos) {

		double x(long nanos) {
			return LABELS + (double) nanos / this.endNanos * (WIDTH - LABELS - MARGIN);
		}

	}

}
