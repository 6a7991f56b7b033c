package dev.modelkeeper.onnx.writer;

import dev.modelkeeper.onnx.Datatype;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * Builds a single-graph ONNX model (IR version 8, default-domain opset 13) and serializes it to the
 * ONNX protobuf format with ModelKeeper's own encoder. Not thread-safe: one builder per model,
 * built and written by one thread at a time.
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
 *
 * <p>{@link #writeTo(Path)} and {@link #writeTo(OutputStream)} stream the model: each embedded
 * message's length is computed first, then the fields are written straight to the stream, so
 * writing holds no copy of the weights (FP32 initializers keep the caller's array, or generate
 * their values while they are written). {@link #toByteArray()} encodes the same bytes in memory.
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
  private static final int TYPE_SEQUENCE_TYPE = 4;
  private static final int SEQUENCE_ELEM_TYPE = 1;
  private static final int TENSOR_TYPE_ELEM_TYPE = 1;
  private static final int TENSOR_TYPE_SHAPE = 2;
  private static final int SHAPE_DIM = 1;
  private static final int DIM_VALUE = 1;
  private static final int DIM_PARAM = 2;

  /** The output buffer of {@link #writeTo(Path)}. */
  private static final int FILE_BUFFER_BYTES = 1 << 16;

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
  private final List<ProtoMessage> nodes = new ArrayList<>();
  private final List<ProtoMessage> initializers = new ArrayList<>();
  private final List<ProtoMessage> inputs = new ArrayList<>();
  private final List<ProtoMessage> outputs = new ArrayList<>();
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

  /** A graph input that declares its element type but no shape: a tensor of any rank. */
  public OnnxGraphBuilder shapelessInput(String name, Datatype datatype) {
    ProtoMessage tensorType = new ProtoMessage().int64(TENSOR_TYPE_ELEM_TYPE, onnxType(datatype));
    ProtoMessage type = new ProtoMessage().message(TYPE_TENSOR_TYPE, tensorType);
    inputs.add(new ProtoMessage().string(VALUE_INFO_NAME, name).message(VALUE_INFO_TYPE, type));
    return this;
  }

  /** A graph output that declares its element type but no shape. */
  public OnnxGraphBuilder shapelessOutput(String name, Datatype datatype) {
    ProtoMessage tensorType = new ProtoMessage().int64(TENSOR_TYPE_ELEM_TYPE, onnxType(datatype));
    ProtoMessage type = new ProtoMessage().message(TYPE_TENSOR_TYPE, tensorType);
    outputs.add(new ProtoMessage().string(VALUE_INFO_NAME, name).message(VALUE_INFO_TYPE, type));
    return this;
  }

  /** A graph input that is an ONNX sequence of tensors of {@code datatype}, not a tensor. */
  public OnnxGraphBuilder sequenceInput(String name, Datatype datatype, long... shape) {
    ProtoMessage element = tensorType(name, datatype, shape);
    ProtoMessage sequence = new ProtoMessage().message(SEQUENCE_ELEM_TYPE, element);
    ProtoMessage type = new ProtoMessage().message(TYPE_SEQUENCE_TYPE, sequence);
    inputs.add(new ProtoMessage().string(VALUE_INFO_NAME, name).message(VALUE_INFO_TYPE, type));
    return this;
  }

  /** A graph output; {@code -1} dimensions are dynamic. */
  public OnnxGraphBuilder output(String name, Datatype datatype, long... shape) {
    outputs.add(valueInfo(name, datatype, shape));
    return this;
  }

  /**
   * A constant FP32 tensor, stored little-endian in {@code raw_data}. The array is not copied:
   * leave it unchanged until the model has been written for the last time.
   */
  public OnnxGraphBuilder initializer(String name, long[] dims, float[] data) {
    checkCount(name, dims, data.length);
    return initializer(
        name, dims, (first, into, count) -> System.arraycopy(data, (int) first, into, 0, count));
  }

  /**
   * A constant FP32 tensor of {@code dims} whose values {@code values} produces while the model is
   * written, stored little-endian in {@code raw_data}; a large generated tensor is then never held
   * in memory.
   */
  public OnnxGraphBuilder initializer(String name, long[] dims, FloatGenerator values) {
    Objects.requireNonNull(values, "values");
    long count = elementCount(name, dims);
    if (count > ProtoMessage.MAX_ARRAY_LENGTH / Float.BYTES) {
      throw new IllegalArgumentException("initializer '" + name + "' is larger than 2 GiB");
    }
    initializers.add(
        tensorHeader(name, Datatype.FP32, dims)
            .lengthDelimited(TENSOR_RAW_DATA, new FloatRawData(count, values)));
    return this;
  }

  /** A constant INT64 tensor, stored little-endian in {@code raw_data}. */
  public OnnxGraphBuilder initializer(String name, long[] dims, long[] data) {
    checkCount(name, dims, data.length);
    ByteBuffer bb = ByteBuffer.allocate(data.length * 8).order(ByteOrder.LITTLE_ENDIAN);
    bb.asLongBuffer().put(data);
    initializers.add(tensorHeader(name, Datatype.INT64, dims).bytes(TENSOR_RAW_DATA, bb.array()));
    return this;
  }

  /** A node of the default domain; it is named {@code <opType>_<index>}. */
  public OnnxGraphBuilder node(
      String opType, List<String> nodeInputs, List<String> nodeOutputs, Attribute... attributes) {
    ProtoMessage n = new ProtoMessage();
    for (String in : nodeInputs) {
      n.string(NODE_INPUT, in);
    }
    for (String out : nodeOutputs) {
      n.string(NODE_OUTPUT, out);
    }
    n.string(NODE_NAME, opType + "_" + nodes.size());
    n.string(NODE_OP_TYPE, opType);
    for (Attribute a : attributes) {
      ProtoMessage aw = new ProtoMessage().string(ATTR_NAME, a.name);
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

  /** The serialized {@code ModelProto}, encoded in memory; see {@link #writeTo(Path)}. */
  public byte[] toByteArray() {
    return model().toByteArray();
  }

  /**
   * Streams the serialized {@code ModelProto} to {@code out}, which is neither flushed nor closed;
   * give it a buffered stream.
   *
   * @throws IllegalStateException when the model is larger than protobuf's 2 GiB limit
   */
  public void writeTo(OutputStream out) throws IOException {
    ProtoMessage model = model();
    if (model.length() > ProtoMessage.MAX_ARRAY_LENGTH) {
      throw new IllegalStateException("protobuf message larger than 2 GiB");
    }
    model.writeTo(new ProtoWriter(out));
  }

  /**
   * Streams the model to {@code file} through a temporary file in the same folder, which is forced
   * to disk and then atomically renamed, so {@code file} is either absent, as before, or complete.
   */
  public Path writeTo(Path file) {
    try {
      Path dir = file.toAbsolutePath().getParent();
      Files.createDirectories(dir);
      Path tmp = Files.createTempFile(dir, ".model-", ".tmp");
      try {
        try (FileChannel channel = FileChannel.open(tmp, StandardOpenOption.WRITE);
            OutputStream out =
                new BufferedOutputStream(Channels.newOutputStream(channel), FILE_BUFFER_BYTES)) {
          writeTo(out);
          out.flush();
          channel.force(true);
        }
        Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
      } finally {
        Files.deleteIfExists(tmp);
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write ONNX model " + file, e);
    }
    return file;
  }

  /** The {@code ModelProto}, referring to (not copying) the nodes, initializers and values. */
  private ProtoMessage model() {
    ProtoMessage graph = new ProtoMessage();
    for (ProtoMessage n : nodes) {
      graph.message(GRAPH_NODE, n);
    }
    graph.string(GRAPH_NAME, graphName);
    for (ProtoMessage t : initializers) {
      graph.message(GRAPH_INITIALIZER, t);
    }
    for (ProtoMessage i : inputs) {
      graph.message(GRAPH_INPUT, i);
    }
    for (ProtoMessage o : outputs) {
      graph.message(GRAPH_OUTPUT, o);
    }
    ProtoMessage model =
        new ProtoMessage()
            .int64(MODEL_IR_VERSION, IR_VERSION)
            .string(MODEL_PRODUCER_NAME, "modelkeeper")
            .string(MODEL_PRODUCER_VERSION, "1")
            .int64(MODEL_MODEL_VERSION, modelVersion);
    if (!docString.isEmpty()) {
      model.string(MODEL_DOC_STRING, docString);
    }
    model.message(MODEL_GRAPH, graph);
    model.message(
        MODEL_OPSET_IMPORT,
        new ProtoMessage().string(OPSET_DOMAIN, "").int64(OPSET_VERSION, OPSET));
    return model;
  }

  /** A {@code TensorProto} up to its {@code raw_data}, which the caller adds. */
  private static ProtoMessage tensorHeader(String name, Datatype datatype, long[] dims) {
    return new ProtoMessage()
        .packedInt64(TENSOR_DIMS, dims.clone())
        .int64(TENSOR_DATA_TYPE, onnxType(datatype))
        .string(TENSOR_NAME, name);
  }

  private static ProtoMessage valueInfo(String name, Datatype datatype, long[] shape) {
    return new ProtoMessage()
        .string(VALUE_INFO_NAME, name)
        .message(VALUE_INFO_TYPE, tensorType(name, datatype, shape));
  }

  /** The {@code TypeProto} of a tensor; dynamic dimensions are named after {@code name}. */
  private static ProtoMessage tensorType(String name, Datatype datatype, long[] shape) {
    ProtoMessage dims = new ProtoMessage();
    for (int i = 0; i < shape.length; i++) {
      ProtoMessage dim = new ProtoMessage();
      if (shape[i] < 0) {
        dim.string(DIM_PARAM, name + "_dim" + i);
      } else {
        dim.int64(DIM_VALUE, shape[i]);
      }
      dims.message(SHAPE_DIM, dim);
    }
    ProtoMessage tensorType =
        new ProtoMessage()
            .int64(TENSOR_TYPE_ELEM_TYPE, onnxType(datatype))
            .message(TENSOR_TYPE_SHAPE, dims);
    return new ProtoMessage().message(TYPE_TENSOR_TYPE, tensorType);
  }

  private static void checkCount(String name, long[] dims, int length) {
    long n = elementCount(name, dims);
    if (n != length) {
      throw new IllegalArgumentException(
          "initializer '" + name + "' has " + length + " values for " + n + " elements");
    }
  }

  private static long elementCount(String name, long[] dims) {
    long n = 1;
    for (long d : dims) {
      if (d < 0) {
        throw new IllegalArgumentException("initializer '" + name + "' has a negative dimension");
      }
      n = Math.multiplyExact(n, d);
    }
    return n;
  }
}
