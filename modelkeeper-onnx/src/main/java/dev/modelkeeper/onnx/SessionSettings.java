package dev.modelkeeper.onnx;

import ai.onnxruntime.OrtException;
import ai.onnxruntime.OrtSession;

/**
 * How {@link OnnxModel} configures a model's ONNX Runtime session: one place that sets the options
 * and describes them, so that a pre-optimized form is keyed by exactly what the session is given.
 * Immutable and thread-safe.
 *
 * <p>Models of {@link dev.modelkeeper.onnx.memory.MemoryCost#SMALL_MODEL_BYTES} or more allocate
 * through ONNX Runtime's arena ({@code arena}) with their weights outside it (the arena then holds
 * only what runs need, and gives it back after each run); smaller ones allocate their few small
 * tensors straight from the C allocator: an arena of their own would keep about 40 KB per model
 * between runs, a third of a tiny model's whole cost. Memory patterns are off (a pattern would keep
 * the largest run's buffers); graph optimizations are ONNX Runtime's default, all of them.
 *
 * @param intraOpThreads threads one run may use
 * @param interOpThreads threads running independent operators at once (above 1: parallel mode)
 * @param arena whether tensors are allocated through ONNX Runtime's arena
 */
record SessionSettings(int intraOpThreads, int interOpThreads, boolean arena) {

  /** New session options as described, naming the session {@code loggerId} in runtime messages. */
  OrtSession.SessionOptions create(String loggerId) throws OrtException {
    OrtSession.SessionOptions opts = new OrtSession.SessionOptions();
    try {
      opts.setLoggerId(loggerId);
      opts.setIntraOpNumThreads(intraOpThreads);
      opts.setInterOpNumThreads(interOpThreads);
      if (interOpThreads > 1) { // inter-op threads only run in parallel mode
        opts.setExecutionMode(OrtSession.SessionOptions.ExecutionMode.PARALLEL);
      }
      opts.setOptimizationLevel(OrtSession.SessionOptions.OptLevel.ALL_OPT);
      opts.setCPUArenaAllocator(arena);
      opts.setMemoryPatternOptimization(false);
      if (arena) {
        opts.addConfigEntry("session.use_device_allocator_for_initializers", "1");
      }
      return opts;
    } catch (OrtException | RuntimeException e) {
      opts.close();
      throw e;
    }
  }

  /**
   * What {@link #create} sets but the logger id, as part of a pre-optimized form's key: the
   * record's fields and a version of {@link #create} itself, raised whenever it sets anything else.
   */
  String describe() {
    return "session settings " + VERSION + ": " + this;
  }

  /** The version of what {@link #create} sets; raise it with every change there. */
  private static final int VERSION = 1;
}
