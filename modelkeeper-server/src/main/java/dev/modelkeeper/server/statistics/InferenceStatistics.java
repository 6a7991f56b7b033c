package dev.modelkeeper.server.statistics;

import dev.modelkeeper.server.execution.ExecutionListener;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.IntSupplier;

/**
 * Counts every model's inference statistics from what its executor reports, and hands each executor
 * a listener that reports to these counters and to another factory's listener (the server's
 * metrics). Thread-safe: the request path only adds to per-model counters ({@link LongAdder}s, no
 * lock, no word shared by all models); {@link #of} reads them without stopping it, so a reading
 * taken while requests run may count a request in one figure and not yet in another. Instants come
 * from {@link System#nanoTime()}, the executors' ticker.
 */
public final class InferenceStatistics implements ExecutionListener.Factory {

  private final ExecutionListener.Factory alongside;
  private final Map<String, Counters> models = new ConcurrentHashMap<>();

  /** Statistics whose listeners also report to {@code alongside}'s. */
  public InferenceStatistics(ExecutionListener.Factory alongside) {
    this.alongside = alongside;
  }

  @Override
  public ExecutionListener forModel(String modelKey, IntSupplier queued) {
    return new Both(
        models.computeIfAbsent(modelKey, k -> new Counters(queued)),
        alongside.forModel(modelKey, queued));
  }

  @Override
  public void answered() {
    alongside.answered();
  }

  /** The statistics of the model resident (or run) under {@code modelKey}; zeros when none. */
  public ModelStats of(String modelKey) {
    Counters c = models.get(modelKey);
    return c == null ? ModelStats.NONE : c.read();
  }

  /** The identifiers of the models that have had requests since the server started. */
  public Set<String> keys() {
    return Set.copyOf(models.keySet());
  }

  /** A count and a sum of nanoseconds. */
  private static final class Adders {
    final LongAdder count = new LongAdder();
    final LongAdder ns = new LongAdder();

    void add(long times, long nanos) {
      count.add(times);
      ns.add(nanos);
    }

    Timing read() {
      return new Timing(count.sum(), ns.sum());
    }
  }

  /** The runs of one batch size. */
  private static final class Batch {
    final LongAdder runs = new LongAdder();
    final LongAdder input = new LongAdder();
    final LongAdder infer = new LongAdder();
    final LongAdder output = new LongAdder();

    BatchStats read(int size) {
      long n = runs.sum();
      return new BatchStats(
          size,
          new Timing(n, input.sum()),
          new Timing(n, infer.sum()),
          new Timing(n, output.sum()));
    }
  }

  /** One model's counters; its executor's listener. */
  private static final class Counters implements ExecutionListener {
    final Adders success = new Adders();
    final Adders fail = new Adders();
    final Adders queue = new Adders();
    final Adders input = new Adders();
    final Adders infer = new Adders();
    final Adders output = new Adders();
    final LongAdder inferences = new LongAdder();
    final LongAdder executions = new LongAdder();
    final Map<Integer, Batch> batches = new ConcurrentSkipListMap<>();
    final IntSupplier queued;

    /**
     * The ticker instant the latest request ended; 0 before the first (a lost race is harmless).
     */
    volatile long lastEnded;

    Counters(IntSupplier queued) {
      this.queued = queued;
    }

    @Override
    public void rejected() {
      fail.add(1, 0);
    }

    @Override
    public void waited(long queueNanos) {
      queue.add(1, queueNanos);
    }

    @Override
    public void ran(int requests, int rows, long inputNanos, long inferNanos, long outputNanos) {
      input.add(requests, inputNanos * requests);
      infer.add(requests, inferNanos * requests);
      output.add(requests, outputNanos * requests);
      inferences.add(rows);
      executions.increment();
      Batch b = batches.get(rows);
      if (b == null) {
        b = batches.computeIfAbsent(rows, r -> new Batch());
      }
      b.runs.increment();
      b.input.add(inputNanos);
      b.infer.add(inferNanos);
      b.output.add(outputNanos);
    }

    @Override
    public void ended(boolean ok, long nanos, long endedAt) {
      (ok ? success : fail).add(1, nanos);
      lastEnded = endedAt;
    }

    ModelStats read() {
      long last = lastEnded;
      long lastMillis =
          last == 0 ? 0 : System.currentTimeMillis() - (System.nanoTime() - last) / 1_000_000;
      List<BatchStats> perSize = new ArrayList<>();
      batches.forEach((size, b) -> perSize.add(b.read(size)));
      return new ModelStats(
          lastMillis,
          inferences.sum(),
          executions.sum(),
          success.read(),
          fail.read(),
          queue.read(),
          input.read(),
          infer.read(),
          output.read(),
          perSize,
          queued.getAsInt());
    }
  }

  /** Reports to the statistics and to another listener. */
  private static final class Both implements ExecutionListener {
    final ExecutionListener first;
    final ExecutionListener second;

    Both(ExecutionListener first, ExecutionListener second) {
      this.first = first;
      this.second = second;
    }

    @Override
    public void rejected() {
      first.rejected();
      second.rejected();
    }

    @Override
    public void waited(long queueNanos) {
      first.waited(queueNanos);
      second.waited(queueNanos);
    }

    @Override
    public void ran(int requests, int rows, long runNanos) {
      first.ran(requests, rows, runNanos);
      second.ran(requests, rows, runNanos);
    }

    @Override
    public void ran(int requests, int rows, long inputNanos, long inferNanos, long outputNanos) {
      first.ran(requests, rows, inputNanos, inferNanos, outputNanos);
      second.ran(requests, rows, inputNanos, inferNanos, outputNanos);
    }

    @Override
    public void ended(boolean ok, long nanos, long endedAt) {
      first.ended(ok, nanos, endedAt);
      second.ended(ok, nanos, endedAt);
    }
  }
}
