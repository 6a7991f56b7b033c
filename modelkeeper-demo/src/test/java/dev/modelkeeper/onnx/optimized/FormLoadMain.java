package dev.modelkeeper.onnx.optimized;

import dev.modelkeeper.onnx.ModelConfig;
import dev.modelkeeper.onnx.OnnxModel;
import dev.modelkeeper.onnx.OnnxModelOptions;
import java.nio.file.Path;

/**
 * A second process for the shared-folder test: loads one model file through a folder of
 * pre-optimized forms (built on the loading thread, before the load) and prints {@code built=<b>
 * read=<r>}: whether this process built the form, and whether the load read it.
 *
 * <p>Usage: {@code FormLoadMain <folder> <model file> <runtime version>}.
 */
public final class FormLoadMain {

  private FormLoadMain() {}

  public static void main(String[] args) throws Exception {
    PreOptimizedFormTest.Events events = new PreOptimizedFormTest.Events();
    OptimizedModels forms = OptimizedModels.in(Path.of(args[0]), args[2], 0, Runnable::run, events);
    OnnxModel model =
        OnnxModel.load(
            Path.of(args[1]),
            "model",
            "1",
            ModelConfig.EMPTY,
            OnnxModelOptions.defaults().withOptimizedModels(forms));
    model.clearCache();
    System.out.println(
        "built=" + !events.building.isEmpty() + " read=" + !events.reading.isEmpty());
    System.out.flush();
  }
}
