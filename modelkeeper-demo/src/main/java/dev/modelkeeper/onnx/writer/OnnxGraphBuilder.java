package dev.modelkeeper.onnx.writer;

import dev.modelkeeper.onnx.Datatype;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * Builds a single-graph ONNX model (IR version 8, default-domain opset 13) and serializes it to the
 * ONNX protobuf format with ModelKeeper's own encoder. Not thread-safe: one builder per model.
 *
 * <p>Example, {@code y = relu(x·W + b)}:
 *
 * <pre>{@code
 * byte[] onnx = new OnnxGraphBuilder("tiny")
 *     .input("x", Datatype.FP32, -1, 4)
 *     .initializer("W", new long[] {4, 2}, weights)
 *     .initializer("b", new long[] {2}, bias)
 *     .node("MatMul", List.of("x", "W"), List.of("xw"))
 *     .node("Add", List.of("xw", "b"), List.of("z"))
 *     .node("Relu", List.of("z"), List.of("y"))
 *     .output("y", Datatype.FP32, -1, 2)
 *     .toByteArray();
 * }</pre>
 *
 * <p>A dimension of {@code -1} in an input or output becomes a symbolic (dynamic) dimension.
 */
public final class OnnxGraphBuilder {

  /** The IR version written; ONNX Runtime 1.22 reads IR versions up to 11. */
  public static final long IR_VERSION = 8;

  /** The default-domain operator set written. */
  public static final long OPSET = 13;

  // ModelProto fields
  private static final int MODEL_IR_VERSION = 1;
  private static final int MODEL_PRODUCER_NAME = 2;
  private static final int MODEL_PRODUCER_VERSION = 3;
  private static final int MODEL_MODEL_VERSION = 5;
  private static final int MODEL_DOC_STRING = 6;
  private static final int MODEL_GRAPH = 7;
  private static final int MODEL_OPSET_IMPORT = 8;
  // OperatorSetIdProto fields
  private static final int OPSET_DOMAIN = 1;
  private static final int OPSET_VERSION = 2;
  // GraphProto fields
  private static final int GRAPH_NODE = 1;
  private static final int GRAPH_NAME = 2;
  private static final int GRAPH_INITIALIZER = 5;
  private static final int GRAPH_INPUT = 11;
  private static final int GRAPH_OUTPUT = 12;
  // NodeProto fields
  private static final int NODE_INPUT = 1;
  private static final int NODE_OUTPUT = 2;
  private static final int NODE_NAME = 3;
  private static final int NODE_OP_TYPE = 4;
  private static final int NODE_ATTRIBUTE = 5;
  // AttributeProto fields and types
  private static final int ATTR_NAME = 1;
  private static final int ATTR_F = 2;
  private static final int ATTR_I = 3;
  private static final int ATTR_INTS = 8;
  private static final int ATTR_TYPE = 20;
  private static final int ATTR_TYPE_FLOAT = 1;
  private static final int ATTR_TYPE_INT = 2;
  private static final int ATTR_TYPE_INTS = 7;
  // TensorProto fields
  private static final int TENSOR_DIMS = 1;
  private static final int TENSOR_DATA_TYPE = 2;
  private static final int TENSOR_NAME = 8;
  private static final int TENSOR_RAW_DATA = 9;
  // ValueInfoProto / TypeProto / TensorShapeProto fields
  private static final int VALUE_INFO_NAME = 1;
  private static final int VALUE_INFO_TYPE = 2;
  private static final int TYPE_TENSOR_TYPE = 1;
  private static final int TENSOR_TYPE_ELEM_TYPE = 1;
  private static final int TENSOR_TYPE_SHAPE = 2;
  private static final int SHAPE_DIM = 1;
  private static final int DIM_VALUE = 1;
  private static final int DIM_PARAM = 2;

  /**
   * A node attribute; build with {@link #intAttr}, {@link #intsAttr} or {@link #floatAttr}.
   * Immutable and thread-safe.
   */
  public static final class Attribute {
    private final String name;
    private final boolean isInt;
    private final long intValue;
    private final float floatValue;
    private final long[] intsValue; // non-null for an INTS attribute

    private Attribute(String name, boolean isInt, long intValue, float floatValue, long[] ints) {
      this.name = Objects.requireNonNull(name, "name");
      this.isInt = isInt;
      this.intValue = intValue;
      this.floatValue = floatValue;
      this.intsValue = ints;
    }
  }

  private final String graphName;
  private final List<ProtoWriter> nodes = new ArrayList<>();
  private final List<ProtoWriter> initializers = new ArrayList<>();
  private final List<ProtoWriter> inputs = new ArrayList<>();
  private final List<ProtoWriter> outputs = new ArrayList<>();
  private String docString = "";
  private long modelVersion = 1;

  public OnnxGraphBuilder(String graphName) {
    this.graphName = Objects.requireNonNull(graphName, "graphName");
  }

  public static Attribute intAttr(String name, long value) {
    return new Attribute(name, true, value, 0, null);
  }

  /** A list-of-integers attribute, e.g. a convolution's {@code kernel_shape} or {@code pads}. */
  public static Attribute intsAttr(String name, long... values) {
    return new Attribute(name, true, 0, 0, values.clone());
  }

  public static Attribute floatAttr(String name, float value) {
    return new Attribute(name, false, 0, value, null);
  }

  /** The ONNX {@code TensorProto.DataType} code of a datatype. */
  public static int onnxType(Datatype datatype) {
    return datatype.onnxElementType();
  }

  public OnnxGraphBuilder docString(String doc) {
    this.docString = Objects.requireNonNull(doc, "doc");
    return this;
  }

  public OnnxGraphBuilder modelVersion(long version) {
    this.modelVersion = version;
    return this;
  }

  /** A graph input; {@code -1} dimensions are dynamic. */
  public OnnxGraphBuilder input(String name, Datatype datatype, long... shape) {
    inputs.add(valueInfo(name, datatype, shape));
    return this;
  }

  /** A graph output; {@code -1} dimensions are dynamic. */
  public OnnxGraphBuilder output(String name, Datatype datatype, long... shape) {
    outputs.add(valueInfo(name, datatype, shape));
    return this;
  }

  /** A constant FP32 tensor, stored little-endian in {@code raw_data}. */
  public OnnxGraphBuilder initializer(String name, long[] dims, float[] data) {
    checkCount(name, dims, data.length);
    ByteBuffer bb = ByteBuffer.allocate(data.length * 4).order(ByteOrder.LITTLE_ENDIAN);
    bb.asFloatBuffer().put(data);
    return initializer(name, Datatype.FP32, dims, bb.array());
  }

  /** A constant INT64 tensor, stored little-endian in {@code raw_data}. */
  public OnnxGraphBuilder initializer(String name, long[] dims, long[] data) {
    checkCount(name, dims, data.length);
    ByteBuffer bb = ByteBuffer.allocate(data.length * 8).order(ByteOrder.LITTLE_ENDIAN);
    bb.asLongBuffer().put(data);
    return initializer(name, Datatype.INT64, dims, bb.array());
  }

  /** A node of the default domain; it is named {@code <opType>_<index>}. */
  public OnnxGraphBuilder node(
      String opType, List<String> nodeInputs, List<String> nodeOutputs, Attribute... attributes) {
    ProtoWriter n = new ProtoWriter();
    for (String in : nodeInputs) {
      n.string(NODE_INPUT, in);
    }
    for (String out : nodeOutputs) {
      n.string(NODE_OUTPUT, out);
    }
    n.string(NODE_NAME, opType + "_" + nodes.size());
    n.string(NODE_OP_TYPE, opType);
    for (Attribute a : attributes) {
      ProtoWriter aw = new ProtoWriter().string(ATTR_NAME, a.name);
      if (a.intsValue != null) {
        for (long v : a.intsValue) {
          aw.int64(ATTR_INTS, v);
        }
        aw.int64(ATTR_TYPE, ATTR_TYPE_INTS);
      } else if (a.isInt) {
        aw.int64(ATTR_I, a.intValue).int64(ATTR_TYPE, ATTR_TYPE_INT);
      } else {
        aw.float32(ATTR_F, a.floatValue).int64(ATTR_TYPE, ATTR_TYPE_FLOAT);
      }
      n.message(NODE_ATTRIBUTE, aw);
    }
    nodes.add(n);
    return this;
  }

  /** The serialized {@code ModelProto}. */
  public byte[] toByteArray() {
    ProtoWriter graph = new ProtoWriter();
    for (ProtoWriter n : nodes) {
      graph.message(GRAPH_NODE, n);
    }
    graph.string(GRAPH_NAME, graphName);
    for (ProtoWriter t : initializers) {
      graph.message(GRAPH_INITIALIZER, t);
    }
    for (ProtoWriter i : inputs) {
      graph.message(GRAPH_INPUT, i);
    }
    for (ProtoWriter o : outputs) {
      graph.message(GRAPH_OUTPUT, o);
    }
    ProtoWriter model =
        new ProtoWriter()
            .int64(MODEL_IR_VERSION, IR_VERSION)
            .string(MODEL_PRODUCER_NAME, "modelkeeper")
            .string(MODEL_PRODUCER_VERSION, "1")
            .int64(MODEL_MODEL_VERSION, modelVersion);
    if (!docString.isEmpty()) {
      model.string(MODEL_DOC_STRING, docString);
    }
    model.message(MODEL_GRAPH, graph);
    model.message(
        MODEL_OPSET_IMPORT, new ProtoWriter().string(OPSET_DOMAIN, "").int64(OPSET_VERSION, OPSET));
    return model.toByteArray();
  }

  /** Writes the model to {@code file} through a temporary file and an atomic rename. */
  public Path writeTo(Path file) {
    byte[] bytes = toByteArray();
    try {
      Path dir = file.toAbsolutePath().getParent();
      Files.createDirectories(dir);
      Path tmp = Files.createTempFile(dir, ".model-", ".tmp");
      try {
        Files.write(tmp, bytes);
        Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
      } finally {
        Files.deleteIfExists(tmp);
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write ONNX model " + file, e);
    }
    return file;
  }

  private OnnxGraphBuilder initializer(String name, Datatype datatype, long[] dims, byte[] raw) {
    initializers.add(
        new ProtoWriter()
            .packedInt64(TENSOR_DIMS, dims)
            .int64(TENSOR_DATA_TYPE, onnxType(datatype))
            .string(TENSOR_NAME, name)
            .bytes(TENSOR_RAW_DATA, raw));
    return this;
  }

  private static ProtoWriter valueInfo(String name, Datatype datatype, long[] shape) {
    ProtoWriter dims = new ProtoWriter();
    for (int i = 0; i < shape.length; i++) {
      ProtoWriter dim = new ProtoWriter();
      if (shape[i] < 0) {
        dim.string(DIM_PARAM, name + "_dim" + i);
      } else {
        dim.int64(DIM_VALUE, shape[i]);
      }
      dims.message(SHAPE_DIM, dim);
    }
    ProtoWriter tensorType =
        new ProtoWriter()
            .int64(TENSOR_TYPE_ELEM_TYPE, onnxType(datatype))
            .message(TENSOR_TYPE_SHAPE, dims);
    ProtoWriter type = new ProtoWriter().message(TYPE_TENSOR_TYPE, tensorType);
    return new ProtoWriter().string(VALUE_INFO_NAME, name).message(VALUE_INFO_TYPE, type);
  }

  private static void checkCount(String name, long[] dims, int length) {
    long n = 1;
    for (long d : dims) {
      if (d < 0) {
        throw new IllegalArgumentException("initializer '" + name + "' has a negative dimension");
      }
      n *= d;
    }
    if (n != length) {
      throw new IllegalArgumentException(
          "initializer '" + name + "' has " + length + " values for " + n + " elements");
    }
  }
}
