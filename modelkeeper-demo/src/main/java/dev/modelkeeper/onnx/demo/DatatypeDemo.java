package dev.modelkeeper.onnx.demo;

import dev.modelkeeper.onnx.Datatype;
import dev.modelkeeper.onnx.writer.OnnxGraphBuilder;
import java.util.List;

/**
 * The {@code types} demo model: one 1-D input per supported datatype, each mapped to an output so
 * every tensor conversion path can be checked by hand. Stateless and thread-safe.
 *
 * <table>
 *   <caption>inputs and outputs (all shapes {@code [-1]})</caption>
 *   <tr><th>input</th><th>output</th><th>rule</th></tr>
 *   <tr><td>fp32_in FP32</td><td>fp32_out FP32</td><td>x + x</td></tr>
 *   <tr><td>fp64_in FP64</td><td>fp64_out FP64</td><td>x + x</td></tr>
 *   <tr><td>int32_in INT32</td><td>int32_out INT32</td><td>x + x</td></tr>
 *   <tr><td>int64_in INT64</td><td>int64_out INT64</td><td>x + x</td></tr>
 *   <tr><td></td><td>int64_as_fp32 FP32</td><td>(float) int64_in</td></tr>
 *   <tr><td>int16_in INT16</td><td>int16_out INT16</td><td>x</td></tr>
 *   <tr><td>int8_in INT8</td><td>int8_out INT8</td><td>x</td></tr>
 *   <tr><td>uint8_in UINT8</td><td>uint8_out UINT8</td><td>x</td></tr>
 *   <tr><td>bool_in BOOL</td><td>bool_out BOOL</td><td>not x</td></tr>
 *   <tr><td>bytes_in BYTES</td><td>bytes_out BYTES</td><td>x</td></tr>
 * </table>
 */
public final class DatatypeDemo {

  private DatatypeDemo() {}

  /** The graph of the {@code types} model. */
  public static OnnxGraphBuilder graph() {
    OnnxGraphBuilder g =
        new OnnxGraphBuilder("types")
            .docString("one input per datatype: numbers doubled, bools negated, others echoed");
    doubled(g, "fp32", Datatype.FP32);
    doubled(g, "fp64", Datatype.FP64);
    doubled(g, "int32", Datatype.INT32);
    doubled(g, "int64", Datatype.INT64);
    g.node(
        "Cast",
        List.of("int64_in"),
        List.of("int64_as_fp32"),
        OnnxGraphBuilder.intAttr("to", OnnxGraphBuilder.onnxType(Datatype.FP32)));
    g.output("int64_as_fp32", Datatype.FP32, -1);
    echoed(g, "int16", Datatype.INT16);
    echoed(g, "int8", Datatype.INT8);
    echoed(g, "uint8", Datatype.UINT8);
    g.input("bool_in", Datatype.BOOL, -1)
        .node("Not", List.of("bool_in"), List.of("bool_out"))
        .output("bool_out", Datatype.BOOL, -1);
    echoed(g, "bytes", Datatype.BYTES);
    return g;
  }

  private static void doubled(OnnxGraphBuilder g, String prefix, Datatype dt) {
    g.input(prefix + "_in", dt, -1)
        .node("Add", List.of(prefix + "_in", prefix + "_in"), List.of(prefix + "_out"))
        .output(prefix + "_out", dt, -1);
  }

  private static void echoed(OnnxGraphBuilder g, String prefix, Datatype dt) {
    g.input(prefix + "_in", dt, -1)
        .node("Identity", List.of(prefix + "_in"), List.of(prefix + "_out"))
        .output(prefix + "_out", dt, -1);
  }
}
