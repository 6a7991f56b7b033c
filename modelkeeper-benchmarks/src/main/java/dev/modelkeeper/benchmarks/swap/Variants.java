package dev.modelkeeper.benchmarks.swap;

import ai.onnxruntime.OrtException;
import ai.onnxruntime.OrtSession;

/** The session options of the replica of the load path. Stateless. */
final class Variants {

  private Variants() {}

  /** The session options of 5b33505's {@code OnnxModel.load} for a model with the defaults. */
  static OrtSession.SessionOptions serverSessionOptions(String id, boolean small)
      throws OrtException {
    OrtSession.SessionOptions opts = new OrtSession.SessionOptions();
    opts.setLoggerId(id);
    opts.setIntraOpNumThreads(1);
    opts.setInterOpNumThreads(1);
    opts.setCPUArenaAllocator(!small);
    opts.setMemoryPatternOptimization(false);
    if (!small) {
      opts.addConfigEntry("session.use_device_allocator_for_initializers", "1");
    }
    return opts;
  }
}
