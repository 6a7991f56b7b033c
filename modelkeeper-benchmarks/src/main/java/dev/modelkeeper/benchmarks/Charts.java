package dev.modelkeeper.benchmarks;

import java.awt.Graphics2D;
import java.awt.Rectangle;
import java.awt.RenderingHints;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import javax.imageio.ImageIO;

/** Draws the report's PNG charts (headless java.awt). Stateless and thread-safe. */
public final class Charts {

  static final String HOT_PATH_PNG = "benchmarks-hotpath.png";
  static final String CHURN_PNG = "benchmarks-churn.png";

  private Charts() {}

  /** Hot-path throughput, one group per key shape and thread count, one bar per implementation. */
  static void hotPath(Results r, Path file) throws IOException {
    List<String> groups = new ArrayList<>();
    List<String[]> shapes = new ArrayList<>();
    for (String keys : List.of("same", "zipf")) {
      for (int threads : r.settings().hotThreads()) {
        groups.add(
            (keys.equals("same") ? "same key" : "Zipf over 64")
                + ", "
                + threads
                + (threads == 1 ? " thread" : " threads"));
        shapes.add(new String[] {keys, String.valueOf(threads)});
      }
    }
    List<String> series = new ArrayList<>();
    double[][] values = new double[HotPath.IMPLS.size()][groups.size()];
    double[][] lows = new double[HotPath.IMPLS.size()][groups.size()];
    double[][] highs = new double[HotPath.IMPLS.size()][groups.size()];
    for (int s = 0; s < HotPath.IMPLS.size(); s++) {
      String impl = HotPath.IMPLS.get(s);
      series.add(HotPath.displayName(impl));
      for (int g = 0; g < shapes.size(); g++) {
        var f = r.hot(impl, shapes.get(g)[0], Integer.parseInt(shapes.get(g)[1]));
        values[s][g] = f.map(HotPath.Figure::score).orElse(Double.NaN);
        lows[s][g] = f.map(HotPath.Figure::low).orElse(Double.NaN);
        highs[s][g] = f.map(HotPath.Figure::high).orElse(Double.NaN);
      }
    }
    BarChart chart =
        new BarChart(
            "Hot path, 64 resident models: ModelKeeper lease + close vs. baseline lookups (medians, higher is better; whiskers: 99% CI)",
            "million operations per second",
            groups,
            series,
            values,
            new double[][][] {lows, highs},
            null);
    write(file, 1400, 620, (g, w, h) -> chart.draw(g, new Rectangle(0, 0, w, h)));
  }

  /**
   * Churn throughput per design and client count, with failures and cleared-in-use under each bar;
   * then p99.
   */
  static void churn(Results r, Path file) throws IOException {
    List<String> designs = List.of(Design.MODELKEEPER, Design.CAFFEINE, Design.ONE_LOCK);
    List<Integer> threads = r.settings().churnThreads();
    List<String> groups = new ArrayList<>();
    threads.forEach(t -> groups.add(t + " client threads"));
    double[][] tput = new double[designs.size()][threads.size()];
    double[][] p99 = new double[designs.size()][threads.size()];
    String[][] captions = new String[designs.size()][threads.size()];
    for (int s = 0; s < designs.size(); s++) {
      for (int g = 0; g < threads.size(); g++) {
        var res = r.churn(designs.get(s), threads.get(g));
        tput[s][g] = res.map(Churn.Result::throughput).orElse(Double.NaN);
        p99[s][g] = res.map(x -> x.p99() / 1e6).orElse(Double.NaN);
        captions[s][g] =
            res.map(
                    x ->
                        String.format(
                            Locale.ROOT, "failed %d%ncleared %d", x.failed(), x.clearedInUse()))
                .orElse(null);
      }
    }
    var config = r.settings().churn();
    String shape = config.models() + " models, budget " + config.budget();
    BarChart left =
        new BarChart(
            "Churn (" + shape + "): good requests/s, higher is better",
            "requests per second",
            groups,
            designs,
            tput,
            null,
            captions);
    BarChart right =
        new BarChart(
            "Churn: p99 latency of good requests, lower is better",
            "milliseconds",
            groups,
            designs,
            p99,
            null,
            null);
    write(
        file,
        1400,
        560,
        (g, w, h) -> {
          left.draw(g, new Rectangle(0, 0, w * 11 / 20, h));
          right.draw(g, new Rectangle(w * 11 / 20, 0, w - w * 11 / 20, h));
        });
  }

  public interface Painter {
    void paint(Graphics2D g, int width, int height);
  }

  public static void write(Path file, int width, int height, Painter painter) throws IOException {
    BufferedImage image = new BufferedImage(width, height, BufferedImage.TYPE_INT_RGB);
    Graphics2D g = image.createGraphics();
    try {
      g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
      g.setRenderingHint(
          RenderingHints.KEY_TEXT_ANTIALIASING, RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
      painter.paint(g, width, height);
    } finally {
      g.dispose();
    }
    if (!ImageIO.write(image, "png", file.toFile())) {
      throw new IOException("no PNG writer available");
    }
  }
}
