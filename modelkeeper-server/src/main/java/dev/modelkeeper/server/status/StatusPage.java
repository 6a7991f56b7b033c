package dev.modelkeeper.server.status;

import dev.modelkeeper.core.MemoryWait;
import dev.modelkeeper.core.ModelDescription;
import dev.modelkeeper.onnx.memory.MemoryCost;
import dev.modelkeeper.server.engine.Engine;
import dev.modelkeeper.server.observability.StatusBoard;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.Set;
import java.util.StringJoiner;
import org.eclipse.jetty.util.StringUtil;

/** One rendering of the status page; every value from the server is escaped. Not thread-safe. */
final class StatusPage {

  private static final DateTimeFormatter CLOCK =
      DateTimeFormatter.ofPattern("HH:mm:ss").withZone(ZoneOffset.UTC);
  private static final int CHART_WIDTH = 600;
  private static final int CHART_HEIGHT = 120;

  /** Fetches the page every two seconds and swaps in its main element; nothing else. */
  private static final String SCRIPT =
      "(function(){var busy=false;setInterval(function(){if(busy||document.hidden)return;busy=true;"
          + "fetch(location.pathname,{cache:'no-store'}).then(function(r){"
          + "if(!r.ok)throw new Error('status '+r.status);return r.text();}).then(function(t){"
          + "var next=new DOMParser().parseFromString(t,'text/html').querySelector('main');"
          + "if(next)document.querySelector('main').replaceWith(next);"
          + "document.getElementById('live').textContent='live';})"
          + ".catch(function(){document.getElementById('live').textContent="
          + "'server not reachable; retrying';})"
          + ".finally(function(){busy=false;});},2000);})();";

  private static final String STYLE =
      "body{font:14px system-ui,sans-serif;margin:1.5em;color:#222}"
          + "table{border-collapse:collapse;margin:.5em 0 1.5em}"
          + "th,td{padding:.25em .7em;border-bottom:1px solid #ddd;text-align:right}"
          + "th:first-child,td:first-child{text-align:left}th{background:#f4f4f4}"
          + ".READY{color:#080}.LOADING,.UNLOADING{color:#a60}.UNAVAILABLE{color:#888}"
          + "svg{border:1px solid #ddd;background:#fcfcfc}.rps{stroke:#06c}.rss{stroke:#c60}"
          + "polyline{fill:none;stroke-width:1.5}small{color:#666}";

  private final List<Engine.IndexRow> index;
  private final Engine.Registry registry;
  private final List<MemoryWait> waits;
  private final StatusBoard.View board;
  private final long nowMillis;
  private final StringBuilder out = new StringBuilder(8192);

  StatusPage(
      List<Engine.IndexRow> index,
      Engine.Registry registry,
      List<MemoryWait> waits,
      StatusBoard.View board,
      long nowMillis) {
    this.index = index;
    this.registry = registry;
    this.waits = waits;
    this.board = board;
    this.nowMillis = nowMillis;
  }

  String render() {
    out.append("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">")
        .append("<meta name=\"viewport\" content=\"width=device-width\">")
        .append("<link rel=\"icon\" href=\"data:,\">") // no favicon request
        .append("<title>ModelKeeper status</title><style>")
        .append(STYLE)
        .append("</style></head><body><h1>ModelKeeper</h1>")
        .append("<p><small>Refreshed every 2 s: <span id=\"live\">as served at ")
        .append(CLOCK.format(Instant.ofEpochMilli(nowMillis)))
        .append(" UTC</span>. Also: <a href=\"/model/registry\">/model/registry</a>,")
        .append(" <a href=\"/metrics\">/metrics</a>, <a href=\"/v2/docs\">API docs</a>.")
        .append("</small></p><main>");
    summary();
    chart();
    models();
    events();
    out.append("</main><script>").append(SCRIPT).append("</script></body></html>");
    return out.toString();
  }

  private void summary() {
    Engine.Memory m = registry.memory();
    out.append("<h2>Server</h2><table id=\"server\">");
    row("Inference requests per second (last 10 s)", number(board.requestsPerSecond()));
    row(
        "Resident models",
        registry.stats().residentModels()
            + (registry.maxModels() > 0 ? " of at most " + registry.maxModels() : ""));
    row(
        "Model budget charged",
        mib(registry.stats().residentBytes())
            + (registry.maxBytes() > 0 ? " of " + mib(registry.maxBytes()) : ""));
    row("Open leases", Long.toString(registry.stats().activeLeases()));
    row("Process memory (RSS)", m.residentBytes() < 0 ? "unknown" : mib(m.residentBytes()));
    row("Memory cap", mib(m.capBytes()) + " (" + m.capSource() + ")");
    row(
        "Of the cap: JVM / models / working / unaccounted",
        mib(m.jvmBytes())
            + " / "
            + mib(m.modelsBytes())
            + " / "
            + mib(m.workingBytes())
            + " / "
            + mib(m.unaccountedBytes()));
    row("Waiting for room", waits.isEmpty() ? "none" : waiting());
    out.append("</table>");
  }

  /** The waits for room, longest first: "a run of 'b' for 30.0 MiB, 1.2 s, holding its lease". */
  private String waiting() {
    StringJoiner all = new StringJoiner("; ");
    for (MemoryWait w : waits) {
      all.add(
          w.what()
              + (w.bytes() > 0 ? " for " + mib(w.bytes()) : " for a model slot")
              + String.format(Locale.ROOT, ", %.1f s", w.waited().toNanos() / 1e9)
              + (w.holdsLease() ? ", holding its lease" : ""));
    }
    return all.toString();
  }

  private void row(String name, String value) {
    out.append("<tr><th>").append(escape(name)).append("</th><td>");
    out.append(escape(value)).append("</td></tr>");
  }

  /** Requests per second and resident memory over the history, as an inline SVG. */
  private void chart() {
    List<StatusBoard.Point> points = board.history();
    double maxRps = 1;
    long maxRss = 1;
    for (StatusBoard.Point p : points) {
      maxRps = Math.max(maxRps, p.requestsPerSecond());
      maxRss = Math.max(maxRss, p.residentBytes());
    }
    maxRss += maxRss / 4; // room above the line
    out.append("<h2>Last two minutes</h2><p><small><span style=\"color:#06c\">requests/s</span>")
        .append(" (peak ")
        .append(escape(number(maxRps)))
        .append(") and <span style=\"color:#c60\">process memory</span> (top = ")
        .append(escape(mib(maxRss)))
        .append(")</small></p><svg id=\"chart\" width=\"")
        .append(CHART_WIDTH)
        .append("\" height=\"")
        .append(CHART_HEIGHT)
        .append("\" role=\"img\" aria-label=\"requests per second and process memory\">");
    polyline(points, "rps", maxRps, true);
    polyline(points, "rss", maxRss, false);
    out.append("</svg>");
  }

  private void polyline(List<StatusBoard.Point> points, String cls, double max, boolean rate) {
    out.append("<polyline class=\"").append(cls).append("\" points=\"");
    int n = points.size();
    for (int i = 0; i < n; i++) {
      StatusBoard.Point p = points.get(i);
      double value = rate ? p.requestsPerSecond() : Math.max(0, p.residentBytes());
      double x = n == 1 ? CHART_WIDTH : (double) i * CHART_WIDTH / (n - 1);
      double y = CHART_HEIGHT - 2 - value / max * (CHART_HEIGHT - 4);
      out.append(String.format(Locale.ROOT, "%.1f,%.1f ", x, y));
    }
    out.append("\"/>");
  }

  private void models() {
    Map<String, Engine.Resident> residents = new HashMap<>();
    for (Engine.Resident r : registry.models()) {
      residents.put(r.model().modelId(), r);
    }
    out.append("<h2>Models</h2><table id=\"models\"><tr><th>Model</th><th>Version</th>")
        .append("<th>State</th><th>Charged</th><th>Measured</th><th>Leases</th><th>Queued</th>")
        .append("<th>Runs/s</th><th>p99 queue wait</th><th>p99 run</th></tr>");
    Set<String> shown = new HashSet<>();
    for (Engine.IndexRow row : index) {
      shown.add(row.key());
      modelRow(
          row.name(),
          row.version(),
          row.state(),
          row.chargedBytes(),
          row.measured(),
          residents.get(row.key()),
          row.key());
    }
    for (Engine.Resident r : registry.models()) { // added by identifier, outside the repository
      ModelDescription d = r.model();
      if (shown.add(d.modelId())) {
        modelRow(
            d.modelId(),
            "",
            d.state().name(),
            Math.max(0, d.sizeBytes()),
            r.measured(),
            r,
            d.modelId());
      }
    }
    out.append("</table>");
  }

  private void modelRow(
      String name,
      String version,
      String state,
      long charged,
      Optional<MemoryCost> measured,
      Engine.Resident resident,
      String key) {
    StatusBoard.ModelActivity a = board.models().get(key);
    out.append("<tr><td>").append(escape(name)).append("</td><td>").append(escape(version));
    out.append("</td><td class=\"").append(escape(state)).append("\">").append(escape(state));
    cell(charged > 0 ? mib(charged) : "");
    cell(measured.map(c -> mib(c.idleBytes())).orElse(""));
    cell(resident != null ? Integer.toString(resident.model().leases()) : "");
    cell(a != null ? Integer.toString(a.queueDepth()) : "");
    cell(a != null ? number(a.runsPerSecond()) : "");
    cell(a != null ? millis(a.p99QueueMillis()) : "");
    cell(a != null ? millis(a.p99RunMillis()) : "");
    out.append("</td></tr>");
  }

  private void cell(String text) {
    out.append("</td><td>").append(escape(text));
  }

  private void events() {
    out.append("<h2>Recent loads and removals</h2>");
    if (board.recent().isEmpty()) {
      out.append("<p id=\"events\">None yet.</p>");
      return;
    }
    out.append("<table id=\"events\"><tr><th>Time (UTC)</th><th>Model</th><th>Event</th>")
        .append("<th>Detail</th></tr>");
    for (StatusBoard.Event e : board.recent()) {
      out.append("<tr><td>").append(CLOCK.format(Instant.ofEpochMilli(e.epochMillis())));
      cell(e.modelId());
      cell(e.what());
      cell(e.detail());
      out.append("</td></tr>");
    }
    out.append("</table>");
  }

  private static String mib(long bytes) {
    return String.format(Locale.ROOT, "%.1f MiB", bytes / (1024.0 * 1024.0));
  }

  private static String number(double v) {
    return String.format(Locale.ROOT, v >= 100 ? "%.0f" : "%.1f", v);
  }

  /** A bucket bound as "≤ x ms", or "> last bucket" when it is infinite. */
  private static String millis(OptionalDouble v) {
    if (v.isEmpty()) {
      return "";
    }
    double ms = v.getAsDouble();
    if (Double.isInfinite(ms)) {
      return "> 5 s";
    }
    return "≤ " + (ms < 1 ? String.format(Locale.ROOT, "%.2f", ms) : number(ms)) + " ms";
  }

  /** {@code s} as HTML text: markup characters escaped, control characters replaced. */
  static String escape(String s) {
    return StringUtil.sanitizeXmlString(s);
  }
}
