package dev.modelkeeper.onnx.memory;

import static java.lang.System.Logger.Level.WARNING;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.google.errorprone.annotations.concurrent.GuardedBy;
import java.io.IOException;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

/**
 * The memory cost of each model, measured here and kept in a file (when given one) so that the next
 * start charges a model its measured cost before its first load. Thread-safe: a private monitor
 * guards the table and is held for bookkeeping and the (rare) write of the file.
 *
 * <p>Models are keyed by {@code name/version}; a cost belongs to the model file of the size it was
 * measured on, and a file of another size is a model never measured. A file that cannot be read or
 * parsed is ignored with one WARN (costs are then learned again) and replaced on the next
 * measurement.
 *
 * <p>One reading can be disturbed by the rest of the process (a compilation, a collection, a
 * thread's first use of memory all move RSS), which matters most for small models, whose whole cost
 * is a few dozen pages. So a model's load peak and idle figures are the medians of its latest
 * {@link #LOAD_READINGS} load readings, and a small model's working figure the median of its latest
 * run readings (see {@link #recordRun}); older readings are kept in memory only, and after a
 * restart the figures in the file count as one reading each.
 */
public final class MemoryCosts {

  private static final System.Logger LOG = System.getLogger(MemoryCosts.class.getName());
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final int FORMAT = 1;

  /** Load readings a model's load peak and idle figures are the median of. */
  static final int LOAD_READINGS = 5;

  /** Run readings at the largest batch a small model's working figure is the median of. */
  static final int SMALL_MODEL_RUN_READINGS = 9;

  private final Path file;
  private final Object lock = new Object();

  @GuardedBy("lock")
  private final Map<String, MemoryCost> costs = new HashMap<>();

  /** The latest readings per model, for one file size; absent until measured. */
  @GuardedBy("lock")
  private final Map<String, Readings> readings = new HashMap<>();

  private MemoryCosts(Path file) {
    this.file = file;
    if (file != null) {
      read();
    }
  }

  /** Costs kept in {@code file} (read now when it exists, written on every new measurement). */
  public static MemoryCosts persistedIn(Path file) {
    return new MemoryCosts(file);
  }

  /** Costs kept in memory only. */
  public static MemoryCosts inMemory() {
    return new MemoryCosts(null);
  }

  /** The file the costs are kept in, when there is one. */
  public Optional<Path> file() {
    return Optional.ofNullable(file);
  }

  /**
   * The cost to charge for {@code modelId} whose file has {@code fileBytes}: the measured one, or
   * the conservative estimate when this file was never measured.
   */
  public MemoryCost costOf(String modelId, long fileBytes) {
    synchronized (lock) {
      MemoryCost c = costs.get(modelId);
      if (c != null && c.fileBytes() == fileBytes) {
        return c;
      }
    }
    return MemoryCost.estimate(fileBytes);
  }

  /** The cost known for {@code modelId}, measured or not, whatever its file; empty if none. */
  public Optional<MemoryCost> known(String modelId) {
    synchronized (lock) {
      return Optional.ofNullable(costs.get(modelId));
    }
  }

  /**
   * Records a clean measurement of a load of {@code modelId}, with the least floor; returns the
   * cost now charged (see {@link #recordLoad(String, long, long, long, long)}).
   */
  public MemoryCost recordLoad(String modelId, long fileBytes, long peakBytes, long idleBytes) {
    return recordLoad(modelId, fileBytes, MemoryCost.MEASURED_FLOOR_BYTES, peakBytes, idleBytes);
  }

  /**
   * Records a clean measurement of a load of {@code modelId}; returns the cost now charged: each
   * figure the median of the latest readings, at least {@code floorBytes} (see {@link
   * MemoryCost#floorBytes}).
   */
  public MemoryCost recordLoad(
      String modelId, long fileBytes, long floorBytes, long peakBytes, long idleBytes) {
    synchronized (lock) {
      Readings r = readingsOf(modelId, fileBytes);
      r.peaks.add(peakBytes);
      r.idles.add(idleBytes);
      MemoryCost c =
          base(modelId, fileBytes)
              .withLoad(r.peaks.quantile(0.5), r.idles.quantile(0.5), floorBytes);
      costs.put(modelId, c);
      write();
      return c;
    }
  }

  /**
   * Records a clean measurement of a run of {@code rows} rows that took {@code bytes} above idle.
   * Readings at a batch smaller than the largest seen are dropped; a larger batch starts anew,
   * never below the figure it replaces. At one batch, a model of {@link
   * MemoryCost#SMALL_MODEL_BYTES} or more is charged the most it was seen to take: the C allocator
   * keeps what a run freed and hands it to the next run, so after the first run most readings show
   * only part of what a run needs. A smaller model's run moves RSS by less than the rest of the
   * process does, so it is charged the median of its latest {@link #SMALL_MODEL_RUN_READINGS}
   * readings.
   */
  public MemoryCost recordRun(String modelId, long fileBytes, int rows, long bytes) {
    synchronized (lock) {
      MemoryCost c = base(modelId, fileBytes);
      if (c.runMeasured() && rows < c.workingRows()) {
        return c;
      }
      boolean newBatch = !c.runMeasured() || rows > c.workingRows();
      Readings r = readingsOf(modelId, fileBytes);
      if (newBatch) {
        r.runs.clear();
      }
      r.runs.add(bytes);
      boolean small = fileBytes < MemoryCost.SMALL_MODEL_BYTES;
      long working = small ? r.runs.quantile(0.5) : bytes;
      if (c.runMeasured() && (newBatch || !small)) {
        working = Math.max(working, c.workingBytes());
      }
      if (newBatch || working != c.workingBytes()) {
        c = c.withRun(rows, working);
        costs.put(modelId, c);
        write();
      }
      return c;
    }
  }

  /**
   * The readings of {@code modelId}: new ones, seeded with the figures known for this file size (a
   * file's figures count as one reading each), when there are none for it yet.
   */
  @GuardedBy("lock")
  private Readings readingsOf(String modelId, long fileBytes) {
    Readings r = readings.get(modelId);
    if (r == null || r.fileBytes != fileBytes) {
      r = new Readings(fileBytes);
      MemoryCost known = costs.get(modelId);
      if (known != null && known.fileBytes() == fileBytes) {
        if (known.measured()) {
          r.peaks.add(known.loadPeakBytes());
          r.idles.add(known.idleBytes());
        }
        if (known.runMeasured()) {
          r.runs.add(known.workingBytes());
        }
      }
      readings.put(modelId, r);
    }
    return r;
  }

  /** The latest readings of one model file. */
  private static final class Readings {
    final long fileBytes;
    final Recent peaks = new Recent(LOAD_READINGS);
    final Recent idles = new Recent(LOAD_READINGS);
    final Recent runs = new Recent(SMALL_MODEL_RUN_READINGS);

    Readings(long fileBytes) {
      this.fileBytes = fileBytes;
    }
  }

  /** The latest {@code size} values of one figure. Not thread-safe. */
  static final class Recent {
    private final long[] values;
    private int count;
    private int next;

    Recent(int size) {
      this.values = new long[size];
    }

    void add(long value) {
      values[next] = value;
      next = (next + 1) % values.length;
      count = Math.min(count + 1, values.length);
    }

    void clear() {
      count = 0;
      next = 0;
    }

    /** The value at quantile {@code q} (0 to 1) of those kept, rounding up; 0 when none. */
    long quantile(double q) {
      if (count == 0) {
        return 0;
      }
      long[] sorted = Arrays.copyOf(values, count);
      Arrays.sort(sorted);
      return sorted[Math.min(count - 1, (int) Math.floor(q * count))];
    }
  }

  @GuardedBy("lock")
  private MemoryCost base(String modelId, long fileBytes) {
    MemoryCost c = costs.get(modelId);
    return c != null && c.fileBytes() == fileBytes ? c : MemoryCost.estimate(fileBytes);
  }

  private void read() {
    if (!Files.exists(file)) {
      return;
    }
    try {
      JsonNode root = JSON.readTree(file.toFile());
      JsonNode models = root == null ? null : root.get("models");
      if (root == null || root.path("format").asInt() != FORMAT || models == null) {
        throw new IOException("not a memory-cost file of format " + FORMAT);
      }
      Map<String, MemoryCost> read = new HashMap<>();
      for (Map.Entry<String, JsonNode> e : models.properties()) {
        read.put(e.getKey(), parse(e.getValue()));
      }
      synchronized (lock) {
        costs.putAll(read);
      }
    } catch (IOException | RuntimeException e) {
      LOG.log(
          WARNING,
          "ignoring the memory-cost file "
              + file
              + " ("
              + e.getMessage()
              + "); model costs will be measured again and the file rewritten");
    }
  }

  private static MemoryCost parse(JsonNode n) throws IOException {
    String[] required = {"file_bytes", "load_peak_bytes", "idle_bytes", "working_bytes"};
    for (String key : required) {
      if (!n.path(key).canConvertToLong() || n.path(key).asLong() < 0) {
        throw new IOException("an entry lacks a non-negative \"" + key + "\"");
      }
    }
    long file = n.get("file_bytes").asLong();
    long bound = plausibleBytes(file);
    for (String key : required) {
      if (!key.equals("file_bytes") && n.get(key).asLong() > bound) {
        throw new IOException(
            "an entry's \""
                + key
                + "\" of "
                + n.get(key).asLong()
                + " bytes is not plausible for a"
                + " model file of "
                + file
                + " bytes (at most "
                + bound
                + ")");
      }
    }
    return new MemoryCost(
        file,
        n.get("load_peak_bytes").asLong(),
        n.get("idle_bytes").asLong(),
        n.get("working_bytes").asLong(),
        n.path("working_rows").asInt(0),
        n.path("measured").asBoolean(true),
        n.path("run_measured").asBoolean(false));
  }

  /**
   * The most a model file of {@code fileBytes} can plausibly cost: a figure above it in the file is
   * damage, and would otherwise refuse the model (507) forever, since it is never loaded again to
   * be measured anew.
   */
  static long plausibleBytes(long fileBytes) {
    long gib = 1L << 30;
    return fileBytes > Long.MAX_VALUE / 64 - gib ? Long.MAX_VALUE : 64 * fileBytes + gib;
  }

  /** Writes the measured costs to a temporary file, then moves it over the old one. */
  @GuardedBy("lock")
  private void write() {
    if (file == null) {
      return;
    }
    ObjectNode root = JSON.createObjectNode();
    root.put("format", FORMAT);
    ObjectNode models = root.putObject("models");
    costs.entrySet().stream()
        .filter(e -> e.getValue().measured() || e.getValue().runMeasured())
        .sorted(Map.Entry.comparingByKey())
        .forEach(
            e -> {
              MemoryCost c = e.getValue();
              ObjectNode n = models.putObject(e.getKey());
              n.put("file_bytes", c.fileBytes());
              n.put("load_peak_bytes", c.loadPeakBytes());
              n.put("idle_bytes", c.idleBytes());
              n.put("working_bytes", c.workingBytes());
              n.put("working_rows", c.workingRows());
              n.put("measured", c.measured());
              n.put("run_measured", c.runMeasured());
            });
    try {
      Files.createDirectories(file.toAbsolutePath().getParent());
      Path tmp = Files.createTempFile(file.toAbsolutePath().getParent(), ".memory-costs", ".tmp");
      try {
        JSON.writerWithDefaultPrettyPrinter().writeValue(tmp.toFile(), root);
        try {
          Files.move(
              tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (AtomicMoveNotSupportedException e) {
          Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING);
        }
      } finally {
        Files.deleteIfExists(tmp);
      }
    } catch (IOException e) {
      LOG.log(WARNING, "cannot write the memory-cost file " + file + ": " + e.getMessage());
    }
  }
}
