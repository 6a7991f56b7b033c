package dev.modelkeeper.benchmarks.memory;

import dev.modelkeeper.benchmarks.Charts;
import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.FontMetrics;
import java.awt.Graphics2D;
import java.awt.geom.Path2D;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/**
 * A line chart of resident memory over time, one line per run, with limits (a memory cap, a
 * file-size budget) drawn as dashed horizontal lines; written as a PNG with headless java.awt. The
 * benchmarks' {@code BarChart} draws bars only, hence this. Stateless and thread-safe.
 */
final class RssChart {

  private static final double MIB = 1024.0 * 1024.0;
  private static final Color[] COLOURS = {
    new Color(0x1f5fa8), new Color(0xd62728), new Color(0x2ca02c), new Color(0xff7f0e)
  };

  private RssChart() {}

  /**
   * One run's samples.
   *
   * @param label the legend's text
   * @param millis sample times, ms from the run's start
   * @param bytes resident bytes at those times
   */
  record Line(String label, long[] millis, long[] bytes) {}

  /**
   * A horizontal line.
   *
   * @param label its text, written above it at the right
   * @param bytes its height; NaN or not positive skips it
   * @param line the index of the run it belongs to (its colour)
   */
  record Limit(String label, double bytes, int line) {}

  /** Draws {@code lines} and {@code limits} titled {@code title} into PNG {@code file}. */
  static void write(Path file, String title, List<Line> lines, List<Limit> limits)
      throws IOException {
    Charts.write(
        file, 1400, 620, (g, width, height) -> draw(g, width, height, title, lines, limits));
  }

  private static void draw(
      Graphics2D g, int width, int height, String title, List<Line> lines, List<Limit> limits) {
    Font base = new Font(Font.SANS_SERIF, Font.PLAIN, 13);
    Font small = base.deriveFont(11f);
    g.setColor(Color.WHITE);
    g.fillRect(0, 0, width, height);
    g.setColor(Color.BLACK);
    g.setFont(base.deriveFont(Font.BOLD, 16f));
    g.drawString(title, 10, 24);

    int left = 80;
    int right = width - 30;
    int top = 50;
    int bottom = height - 70;
    double maxSeconds = 1;
    double maxMib = 1;
    for (Line l : lines) {
      for (int i = 0; i < l.millis().length; i++) {
        maxSeconds = Math.max(maxSeconds, l.millis()[i] / 1000.0);
        maxMib = Math.max(maxMib, l.bytes()[i] / MIB);
      }
    }
    for (Limit l : limits) {
      if (l.bytes() > 0) {
        maxMib = Math.max(maxMib, l.bytes() / MIB);
      }
    }
    double yStep = step(maxMib * 1.08 / 6);
    double yTop = Math.ceil(maxMib * 1.08 / yStep) * yStep;
    double xStep = step(maxSeconds / 10);
    double xEnd = Math.ceil(maxSeconds / xStep) * xStep;

    g.setFont(small);
    FontMetrics fm = g.getFontMetrics();
    for (double v = 0; v <= yTop + yStep / 2; v += yStep) {
      int y = bottom - (int) Math.round((bottom - top) * v / yTop);
      g.setColor(new Color(0xe0e0e0));
      g.drawLine(left, y, right, y);
      g.setColor(Color.DARK_GRAY);
      String s = String.format(Locale.ROOT, "%.0f", v);
      g.drawString(s, left - 6 - fm.stringWidth(s), y + 4);
    }
    for (double v = 0; v <= xEnd + xStep / 2; v += xStep) {
      int x = left + (int) Math.round((right - left) * v / xEnd);
      g.setColor(Color.DARK_GRAY);
      g.drawLine(x, bottom, x, bottom + 4);
      String s = String.format(Locale.ROOT, xStep < 1 || xStep % 1 != 0 ? "%.1f" : "%.0f", v);
      g.drawString(s, x - fm.stringWidth(s) / 2, bottom + 18);
    }
    g.setFont(base);
    g.setColor(Color.BLACK);
    g.drawLine(left, bottom, right, bottom);
    g.drawLine(left, top, left, bottom);
    g.drawString("seconds since the server was ready", (left + right) / 2 - 110, bottom + 40);
    Graphics2D rotated = (Graphics2D) g.create();
    rotated.rotate(-Math.PI / 2);
    rotated.drawString("resident set size, MiB (VmRSS)", -(top + bottom) / 2 - 90, 22);
    rotated.dispose();

    int previousLabel = Integer.MAX_VALUE;
    for (Limit l : limits) {
      if (!(l.bytes() > 0)) {
        continue;
      }
      int y = bottom - (int) Math.round((bottom - top) * (l.bytes() / MIB) / yTop);
      int labelY = Math.abs(y - 4 - previousLabel) < 14 ? previousLabel - 14 : y - 4;
      previousLabel = labelY;
      g.setColor(COLOURS[l.line() % COLOURS.length]);
      g.setStroke(
          new BasicStroke(
              1.5f, BasicStroke.CAP_BUTT, BasicStroke.JOIN_MITER, 10, new float[] {8, 6}, 0));
      g.drawLine(left, y, right, y);
      g.setFont(small);
      g.drawString(l.label(), right - g.getFontMetrics().stringWidth(l.label()) - 4, labelY);
    }
    g.setStroke(new BasicStroke(1.6f));
    for (int i = 0; i < lines.size(); i++) {
      Line l = lines.get(i);
      Path2D.Double path = new Path2D.Double();
      for (int k = 0; k < l.millis().length; k++) {
        double x = left + (right - left) * (l.millis()[k] / 1000.0) / xEnd;
        double y = bottom - (bottom - top) * (l.bytes()[k] / MIB) / yTop;
        if (k == 0) {
          path.moveTo(x, y);
        } else {
          path.lineTo(x, y);
        }
      }
      g.setColor(COLOURS[i % COLOURS.length]);
      g.draw(path);
    }
    g.setFont(small);
    int lx = left + 10;
    for (int i = 0; i < lines.size(); i++) {
      g.setColor(COLOURS[i % COLOURS.length]);
      g.fillRect(lx, height - 22, 12, 12);
      g.setColor(Color.BLACK);
      g.drawString(lines.get(i).label(), lx + 16, height - 12);
      lx += 16 + g.getFontMetrics().stringWidth(lines.get(i).label()) + 24;
    }
  }

  /** A round step near {@code raw}: 1, 2, 2.5 or 5 times a power of ten. */
  private static double step(double raw) {
    if (!(raw > 0)) {
      return 1;
    }
    double magnitude = Math.pow(10, Math.floor(Math.log10(raw)));
    double r = raw / magnitude;
    return (r <= 1 ? 1 : r <= 2 ? 2 : r <= 2.5 ? 2.5 : r <= 5 ? 5 : 10) * magnitude;
  }
}
