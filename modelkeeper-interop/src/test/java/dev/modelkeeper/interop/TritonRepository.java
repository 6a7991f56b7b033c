package dev.modelkeeper.interop;

import dev.modelkeeper.onnx.Datatype;
import dev.modelkeeper.onnx.writer.OnnxGraphBuilder;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * Writes a model repository in Triton's layout ({@code <model>/config.pbtxt} beside numbered
 * version folders) for the interop tests; every model is generated here, nothing is downloaded.
 *
 * <ul>
 *   <li>{@code addsub}: Triton's {@code simple} example, two INT32 [16] inputs, their sum and
 *       difference, {@code max_batch_size: 8}, dynamic batching, two instances
 *   <li>{@code addsub_nobatch}: the same graph with whole shapes, {@code max_batch_size: 0}
 *   <li>{@code plus_latest} and {@code plus_specific}: versions 1 to 3, each adding its version
 *       number to an FP32 [1] input; served by {@code latest { num_versions: 2 }} and {@code
 *       specific { versions: [1] }}
 *   <li>{@code classifier}: four FP32 scores echoed, with a label file
 *   <li>{@code simple_string} and {@code simple_identity}: Triton's string examples, numbers as
 *       decimal strings added and subtracted, and a BYTES echo
 *   <li>{@code broken}: a {@code config.pbtxt} with a syntax error on line 3
 *   <li>{@code ensemble}, {@code sequence}, {@code decoupled}, {@code pytorch_model}: what
 *       ModelKeeper does not serve, listed and refused
 * </ul>
 */
final class TritonRepository {

  static final String BROKEN_CONFIG =
      "name: \"broken\"\nmax_batch_size: 8\ninput [ { name: \"x\" data_type: TYPE_FP32 dims: [ 4 ]\n";

  private TritonRepository() {}

  static Path write(Path root) throws IOException {
    addSub("addsub", 8)
        .writeTo(Files.createDirectories(root.resolve("addsub/1")).resolve("model.onnx"));
    config(
        root,
        "addsub",
        """
        name: "addsub"
        platform: "onnxruntime_onnx"
        max_batch_size: 8
        input [
          { name: "INPUT0" data_type: TYPE_INT32 dims: [ 16 ] },
          { name: "INPUT1" data_type: TYPE_INT32 dims: [ 16 ] }
        ]
        output [
          { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ 16 ] },
          { name: "OUTPUT1" data_type: TYPE_INT32 dims: [ 16 ] }
        ]
        instance_group [ { count: 2 kind: KIND_CPU } ]
        dynamic_batching { preferred_batch_size: [ 4, 8 ] max_queue_delay_microseconds: 100 }
        """);
    addSub("addsub_nobatch", 0)
        .writeTo(Files.createDirectories(root.resolve("addsub_nobatch/1")).resolve("model.onnx"));
    config(
        root,
        "addsub_nobatch",
        """
        backend: "onnxruntime"
        max_batch_size: 0
        input [
          { name: "INPUT0" data_type: TYPE_INT32 dims: [ 16 ] },
          { name: "INPUT1" data_type: TYPE_INT32 dims: [ 16 ] }
        ]
        output [
          { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ 16 ] },
          { name: "OUTPUT1" data_type: TYPE_INT32 dims: [ 16 ] }
        ]
        """);
    for (String name : List.of("plus_latest", "plus_specific")) {
      for (int v = 1; v <= 3; v++) {
        new OnnxGraphBuilder(name)
            .input("X", Datatype.FP32, -1, 1)
            .initializer("V", new long[] {1}, new float[] {v})
            .node("Add", List.of("X", "V"), List.of("Y"))
            .output("Y", Datatype.FP32, -1, 1)
            .writeTo(Files.createDirectories(root.resolve(name + "/" + v)).resolve("model.onnx"));
      }
    }
    config(
        root,
        "plus_latest",
        """
        max_batch_size: 4
        version_policy: { latest: { num_versions: 2 } }
        """);
    config(
        root,
        "plus_specific",
        """
        max_batch_size: 4
        version_policy: { specific: { versions: [ 1 ] } }
        """);
    new OnnxGraphBuilder("classifier")
        .input("SCORES_IN", Datatype.FP32, -1, 4)
        .node("Identity", List.of("SCORES_IN"), List.of("SCORES"))
        .output("SCORES", Datatype.FP32, -1, 4)
        .writeTo(Files.createDirectories(root.resolve("classifier/1")).resolve("model.onnx"));
    config(
        root,
        "classifier",
        """
        max_batch_size: 8
        input [ { name: "SCORES_IN" data_type: TYPE_FP32 dims: [ 4 ] } ]
        output [ { name: "SCORES" data_type: TYPE_FP32 dims: [ 4 ] label_filename: "labels.txt" } ]
        """);
    Files.writeString(
        root.resolve("classifier/labels.txt"), "cat\ndog\nbird\nfish\n", StandardCharsets.UTF_8);
    strings(root);
    addSub("broken", 8)
        .writeTo(Files.createDirectories(root.resolve("broken/1")).resolve("model.onnx"));
    config(root, "broken", BROKEN_CONFIG);
    unservable(root);
    return root;
  }

  /**
   * Models in Triton's layout that ModelKeeper lists as UNAVAILABLE and refuses: an ensemble over
   * {@code addsub} (an empty version folder, as Triton's ensembles have), a {@code
   * sequence_batching} model and a decoupled one (both with a servable model file), and a model of
   * a backend ModelKeeper lacks ({@code pytorch}).
   */
  private static void unservable(Path root) throws IOException {
    Files.createDirectories(root.resolve("ensemble/1"));
    config(
        root,
        "ensemble",
        """
        name: "ensemble"
        platform: "ensemble"
        max_batch_size: 8
        input [ { name: "IN" data_type: TYPE_INT32 dims: [ 16 ] } ]
        output [ { name: "OUT" data_type: TYPE_INT32 dims: [ 16 ] } ]
        ensemble_scheduling {
          step [ {
            model_name: "addsub"
            model_version: -1
            input_map { key: "INPUT0" value: "IN" }
            input_map { key: "INPUT1" value: "IN" }
            output_map { key: "OUTPUT0" value: "OUT" }
          } ]
        }
        """);
    addSub("sequence", 8)
        .writeTo(Files.createDirectories(root.resolve("sequence/1")).resolve("model.onnx"));
    config(
        root,
        "sequence",
        """
        backend: "onnxruntime"
        max_batch_size: 8
        sequence_batching { max_sequence_idle_microseconds: 5000000 }
        """);
    addSub("decoupled", 8)
        .writeTo(Files.createDirectories(root.resolve("decoupled/1")).resolve("model.onnx"));
    config(
        root,
        "decoupled",
        """
        backend: "onnxruntime"
        max_batch_size: 8
        model_transaction_policy { decoupled: true }
        """);
    Files.writeString(
        Files.createDirectories(root.resolve("pytorch_model/1")).resolve("model.pt"),
        "not a TorchScript file",
        StandardCharsets.UTF_8);
    config(
        root,
        "pytorch_model",
        """
        backend: "pytorch"
        max_batch_size: 8
        input [ { name: "IN" data_type: TYPE_FP32 dims: [ 4 ] } ]
        output [ { name: "OUT" data_type: TYPE_FP32 dims: [ 4 ] } ]
        """);
  }

  /**
   * Triton's string examples: {@code simple_string}, two BYTES [16] inputs holding decimal numbers
   * and their sum and difference as decimal strings (ONNX Cast between STRING and INT32); {@code
   * simple_identity}, a BYTES [-1] echo. Both batch up to 8 rows.
   */
  private static void strings(Path root) throws IOException {
    OnnxGraphBuilder.Attribute toInt =
        OnnxGraphBuilder.intAttr("to", OnnxGraphBuilder.onnxType(Datatype.INT32));
    OnnxGraphBuilder.Attribute toString =
        OnnxGraphBuilder.intAttr("to", OnnxGraphBuilder.onnxType(Datatype.BYTES));
    new OnnxGraphBuilder("simple_string")
        .input("INPUT0", Datatype.BYTES, -1, 16)
        .input("INPUT1", Datatype.BYTES, -1, 16)
        .node("Cast", List.of("INPUT0"), List.of("A"), toInt)
        .node("Cast", List.of("INPUT1"), List.of("B"), toInt)
        .node("Add", List.of("A", "B"), List.of("SUM"))
        .node("Sub", List.of("A", "B"), List.of("DIFF"))
        .node("Cast", List.of("SUM"), List.of("OUTPUT0"), toString)
        .node("Cast", List.of("DIFF"), List.of("OUTPUT1"), toString)
        .output("OUTPUT0", Datatype.BYTES, -1, 16)
        .output("OUTPUT1", Datatype.BYTES, -1, 16)
        .writeTo(Files.createDirectories(root.resolve("simple_string/1")).resolve("model.onnx"));
    config(
        root,
        "simple_string",
        """
        platform: "onnxruntime_onnx"
        max_batch_size: 8
        input [
          { name: "INPUT0" data_type: TYPE_STRING dims: [ 16 ] },
          { name: "INPUT1" data_type: TYPE_STRING dims: [ 16 ] }
        ]
        output [
          { name: "OUTPUT0" data_type: TYPE_STRING dims: [ 16 ] },
          { name: "OUTPUT1" data_type: TYPE_STRING dims: [ 16 ] }
        ]
        """);
    new OnnxGraphBuilder("simple_identity")
        .input("INPUT0", Datatype.BYTES, -1, -1)
        .node("Identity", List.of("INPUT0"), List.of("OUTPUT0"))
        .output("OUTPUT0", Datatype.BYTES, -1, -1)
        .writeTo(Files.createDirectories(root.resolve("simple_identity/1")).resolve("model.onnx"));
    config(
        root,
        "simple_identity",
        """
        platform: "onnxruntime_onnx"
        max_batch_size: 8
        input [ { name: "INPUT0" data_type: TYPE_STRING dims: [ -1 ] } ]
        output [ { name: "OUTPUT0" data_type: TYPE_STRING dims: [ -1 ] } ]
        """);
  }

  /** Sum and difference of two INT32 inputs of 16 elements, with a batch dimension or without. */
  static OnnxGraphBuilder addSub(String name, int maxBatchSize) {
    long[] shape = maxBatchSize > 0 ? new long[] {-1, 16} : new long[] {16};
    return new OnnxGraphBuilder(name)
        .input("INPUT0", Datatype.INT32, shape)
        .input("INPUT1", Datatype.INT32, shape)
        .node("Add", List.of("INPUT0", "INPUT1"), List.of("OUTPUT0"))
        .node("Sub", List.of("INPUT0", "INPUT1"), List.of("OUTPUT1"))
        .output("OUTPUT0", Datatype.INT32, shape)
        .output("OUTPUT1", Datatype.INT32, shape);
  }

  private static void config(Path root, String model, String text) throws IOException {
    Files.writeString(root.resolve(model).resolve("config.pbtxt"), text, StandardCharsets.UTF_8);
  }
}
