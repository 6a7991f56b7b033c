package dev.modelkeeper.benchmarks;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.FontMetrics;
import java.awt.Graphics2D;
import java.awt.Rectangle;
import java.util.List;
import java.util.Locale;

/**
 * A grouped bar chart drawn with java.awt into a given rectangle: one group per workload shape, one
 * bar per series, optional error whiskers and a small caption under each bar. Not thread-safe;
 * build one, draw it once.
 *
 * @param title the panel title
 * @param yLabel the unit of the values
 * @param groups group labels, left to right
 * @param series series names (the legend), in bar order within a group
 * @param values {@code values[series][group]}; NaN leaves a gap
 * @param range {@code {lows, highs}}, each {@code [series][group]}: whisker ends, or null
 * @param captions {@code captions[series][group]} short text under each bar, or null
 */
record BarChart(
    String title,
    String yLabel,
    List<String> groups,
    List<String> series,
    double[][] values,
    double[][][] range,
    String[][] captions) {

  /**
   * A series' colour by its name, the same in every chart: ModelKeeper blue, each baseline its own.
   */
  static Color colour(String series, int index) {
    String s = series.toLowerCase(java.util.Locale.ROOT);
    if (s.contains("basemodelmanager")) {
      return new Color(0x6baed6);
    }
    if (s.startsWith("modelkeeper")) {
      return new Color(0x1f5fa8);
    }
    if (s.contains("concurrenthashmap")) {
      return new Color(0x2ca02c);
    }
    if (s.contains("caffeine")) {
      return new Color(0xff7f0e);
    }
    if (s.contains("one-lock")) {
      return new Color(0xd62728);
    }
    return new Color(0x7f7f7f + index * 0x101010);
  }

  void draw(Graphics2D g, Rectangle area) {
    Font base = new Font(Font.SANS_SERIF, Font.PLAIN, 13);
    Font small = base.deriveFont(11f);
    Font bold = base.deriveFont(Font.BOLD, 16f);
    g.setColor(Color.WHITE);
    g.fill(area);
    g.setColor(Color.BLACK);
    g.setFont(bold);
    g.drawString(title, area.x + 10, area.y + 24);

    int legendRows = 1;
    int left = area.x + 70;
    int right = area.x + area.width - 20;
    int top = area.y + 50;
    int captionSpace = captions == null ? 0 : 34;
    int bottom = area.y + area.height - 40 - captionSpace - legendRows * 22;
    double max = 0;
    for (int s = 0; s < series.size(); s++) {
      for (int gr = 0; gr < groups.size(); gr++) {
        double v = values[s][gr];
        if (!Double.isNaN(v)) {
          max =
              Math.max(
                  max,
                  range == null || Double.isNaN(range[1][s][gr])
                      ? v
                      : Math.max(v, range[1][s][gr]));
        }
      }
    }
    double step = niceStep(max / 5);
    double topValue = Math.max(step, Math.ceil(max / step) * step);

    g.setFont(small);
    FontMetrics fm = g.getFontMetrics();
    for (double t = 0; t <= topValue + step / 2; t += step) {
      int y = yOf(t, topValue, top, bottom);
      g.setColor(new Color(0xe0e0e0));
      g.drawLine(left, y, right, y);
      g.setColor(Color.DARK_GRAY);
      String label = number(t);
      g.drawString(label, left - 6 - fm.stringWidth(label), y + 4);
    }
    Graphics2D rotated = (Graphics2D) g.create();
    rotated.rotate(-Math.PI / 2);
    rotated.setFont(base);
    rotated.drawString(
        yLabel, -(top + bottom) / 2 - g.getFontMetrics(base).stringWidth(yLabel) / 2, area.x + 18);
    rotated.dispose();

    int groupWidth = (right - left) / groups.size();
    int barWidth = Math.max(6, (int) (groupWidth * 0.8 / series.size()));
    for (int gr = 0; gr < groups.size(); gr++) {
      int gx = left + gr * groupWidth + (groupWidth - barWidth * series.size()) / 2;
      for (int s = 0; s < series.size(); s++) {
        double v = values[s][gr];
        int x = gx + s * barWidth;
        if (Double.isNaN(v)) {
          continue;
        }
        int y = yOf(v, topValue, top, bottom);
        g.setColor(colour(series.get(s), s));
        g.fillRect(x + 1, y, barWidth - 2, bottom - y);
        g.setColor(Color.BLACK);
        boolean whisker =
            range != null && !Double.isNaN(range[0][s][gr]) && !Double.isNaN(range[1][s][gr]);
        if (whisker) {
          int y1 = yOf(range[1][s][gr], topValue, top, bottom);
          int y2 = yOf(Math.max(0, range[0][s][gr]), topValue, top, bottom);
          int cx = x + barWidth / 2;
          g.setStroke(new BasicStroke(1.2f));
          g.drawLine(cx, y1, cx, y2);
          g.drawLine(cx - 3, y1, cx + 3, y1);
          g.drawLine(cx - 3, y2, cx + 3, y2);
        }
        String label = number(v);
        g.setFont(small);
        int lw = g.getFontMetrics().stringWidth(label);
        int ly = (whisker ? yOf(Math.max(v, range[1][s][gr]), topValue, top, bottom) : y) - 4;
        g.drawString(label, x + (barWidth - lw) / 2, Math.max(top - 2, ly));
        if (captions != null && captions[s][gr] != null) {
          String[] parts = captions[s][gr].split("\n");
          for (int i = 0; i < parts.length; i++) {
            int cw = g.getFontMetrics().stringWidth(parts[i]);
            g.setColor(parts[i].matches(".*[1-9].*") ? new Color(0xb00000) : Color.DARK_GRAY);
            g.drawString(parts[i], x + (barWidth - cw) / 2, bottom + 14 + i * 12);
          }
          g.setColor(Color.BLACK);
        }
      }
      g.setFont(base);
      String label = groups.get(gr);
      int lw = g.getFontMetrics().stringWidth(label);
      g.drawString(
          label, left + gr * groupWidth + (groupWidth - lw) / 2, bottom + captionSpace + 18);
    }
    g.setColor(Color.BLACK);
    g.drawLine(left, bottom, right, bottom);

    g.setFont(small);
    int lx = left;
    int ly = area.y + area.height - 14;
    for (int s = 0; s < series.size(); s++) {
      g.setColor(colour(series.get(s), s));
      g.fillRect(lx, ly - 10, 12, 12);
      g.setColor(Color.BLACK);
      g.drawString(series.get(s), lx + 16, ly);
      lx += 16 + g.getFontMetrics().stringWidth(series.get(s)) + 18;
    }
  }

  private static int yOf(double v, double max, int top, int bottom) {
    return bottom - (int) Math.round((bottom - top) * (v / max));
  }

  static double niceStep(double raw) {
    if (!(raw > 0)) {
      return 1;
    }
    double magnitude = Math.pow(10, Math.floor(Math.log10(raw)));
    double r = raw / magnitude;
    double nice = r <= 1 ? 1 : r <= 2 ? 2 : r <= 2.5 ? 2.5 : r <= 5 ? 5 : 10;
    return nice * magnitude;
  }

  static String number(double v) {
    if (v == 0) {
      return "0";
    }
    if (v >= 100) {
      return String.format(Locale.ROOT, "%.0f", v);
    }
    if (v >= 10) {
      return String.format(Locale.ROOT, "%.1f", v);
    }
    return String.format(Locale.ROOT, "%.2f", v);
  }
}
