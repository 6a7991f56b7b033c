package dev.modelkeeper.onnx.memory;

/**
 * What one model costs in process memory, in bytes above what the process held before the model was
 * loaded. Immutable.
 *
 * @param fileBytes the size of the model file this cost belongs to (a new file is a new model)
 * @param loadPeakBytes the most the process held above its starting point while the model loaded
 * @param idleBytes what the process keeps while the model is loaded and not running
 * @param workingBytes the most one run took above idle, at {@code workingRows} rows
 * @param workingRows the batch size {@code workingBytes} was seen at (0 when never run)
 * @param measured whether the load figures were measured (else they are the conservative estimate)
 * @param runMeasured whether the working figure was measured (else it is the estimate)
 */
public record MemoryCost(
    long fileBytes,
    long loadPeakBytes,
    long idleBytes,
    long workingBytes,
    int workingRows,
    boolean measured,
    boolean runMeasured) {

  /** Charged for the load of a model never measured: this many times its file, plus the floor. */
  static final double LOAD_PEAK_PER_FILE_BYTE = 2.5;

  /**
   * Charged while a never-measured model stays loaded: this many times its file, plus the floor.
   */
  static final double IDLE_PER_FILE_BYTE = 1.5;

  /** Charged for a run of a model never measured: this many times its file, plus the floor. */
  static final double WORKING_PER_FILE_BYTE = 1.0;

  /** The floor of every estimate: a session's own structures, whatever its file. */
  static final long ESTIMATE_FLOOR_BYTES = 4L << 20;

  /**
   * The conservative estimate for a model file of {@code fileBytes} never measured here. Measured
   * on this project's models with the allocator settings {@code OnnxModel} uses: a session keeps
   * 1.0-1.2x its file and needs 2.0x at the load peak; tiny models cost about 0.1 MB.
   */
  public static MemoryCost estimate(long fileBytes) {
    long f = Math.max(0, fileBytes);
    return new MemoryCost(
        f,
        (long) (f * LOAD_PEAK_PER_FILE_BYTE) + ESTIMATE_FLOOR_BYTES,
        (long) (f * IDLE_PER_FILE_BYTE) + ESTIMATE_FLOOR_BYTES,
        (long) (f * WORKING_PER_FILE_BYTE) + ESTIMATE_FLOOR_BYTES,
        0,
        false,
        false);
  }

  /**
   * The working memory to reserve for a run of {@code rows} rows: the measured figure scaled up
   * linearly past the batch it was seen at, never below it.
   */
  public long workingBytesFor(int rows) {
    if (workingRows <= 0 || rows <= workingRows) {
      return workingBytes;
    }
    return (long) Math.ceil((double) workingBytes * rows / workingRows);
  }

  /**
   * The least any loaded model is charged, measured or not: a session's own structures (400 copies
   * of each tiny demo model, loaded in one process by the per-model benchmark, took 87-113 KiB a
   * copy with their inputs and outputs).
   */
  public static final long MEASURED_FLOOR_BYTES = 88L << 10;

  /** What each graph input and output adds to a session's structures. */
  static final long FLOOR_PER_TENSOR_BYTES = 2L << 10;

  /** Models below this file size have their load cost modelled rather than read. */
  public static final long SMALL_MODEL_BYTES = 1L << 20;

  /** A small model's floor: this many times its file, beside the session's structures. */
  static final double SMALL_MODEL_PER_FILE_BYTE = 1.3;

  /**
   * The least a loaded model of {@code fileBytes} with {@code tensors} graph inputs and outputs is
   * charged. The load of a model under {@link #SMALL_MODEL_BYTES} moves RSS by a few dozen pages,
   * and whether it moves it at all depends on what the C allocator kept from earlier frees (a model
   * loaded again after its unload often reads nothing), so its floor is a model of its cost fitted
   * to 400-copy measurements of the demo models: {@link #MEASURED_FLOOR_BYTES}, {@link
   * #FLOOR_PER_TENSOR_BYTES} per input and output, and {@link #SMALL_MODEL_PER_FILE_BYTE} times the
   * file. A larger model's load is read reliably; its floor is the session's structures only.
   */
  public static long floorBytes(long fileBytes, int tensors) {
    long f = Math.max(0, fileBytes);
    long floor = MEASURED_FLOOR_BYTES + FLOOR_PER_TENSOR_BYTES * Math.max(0, tensors);
    return f < SMALL_MODEL_BYTES ? floor + (long) (f * SMALL_MODEL_PER_FILE_BYTE) : floor;
  }

  /** This cost with the load figures measured, each at least {@code floorBytes}. */
  MemoryCost withLoad(long peak, long idle, long floorBytes) {
    long i = Math.max(floorBytes, idle);
    return new MemoryCost(
        fileBytes, Math.max(i, peak), i, workingBytes, workingRows, true, runMeasured);
  }

  /** This cost with a run of {@code rows} rows seen to take {@code bytes} above idle. */
  MemoryCost withRun(int rows, long bytes) {
    return new MemoryCost(fileBytes, loadPeakBytes, idleBytes, bytes, rows, measured, true);
  }
}
