package dev.modelkeeper.onnx;

import com.google.protobuf.CodedInputStream;
import com.google.protobuf.WireFormat;
import java.io.FileInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Set;

/**
 * What a model file declares about its graph inputs that ONNX Runtime's Java API does not tell:
 * which inputs declare no shape at all (a tensor of any rank, which the Java API reports like a
 * scalar), and which inputs have a default value, an initializer of the same name. Read from the
 * file's {@code ModelProto} by walking its fields (numbers as in ONNX's {@code onnx.proto}) from a
 * file stream that seeks past everything else, so weights are neither read nor kept mapped.
 * Immutable and thread-safe.
 *
 * @param shapeless inputs whose type declares no shape
 * @param withDefaults inputs that an initializer of the same name gives a default
 */
record GraphInputs(Set<String> shapeless, Set<String> withDefaults) {

  /** Nothing known: every input as the runtime reports it. */
  static final GraphInputs NONE = new GraphInputs(Set.of(), Set.of());

  private static final int MODEL_GRAPH = 7;
  private static final int GRAPH_INITIALIZER = 5;
  private static final int GRAPH_INPUT = 11;
  private static final int GRAPH_SPARSE_INITIALIZER = 15;
  private static final int TENSOR_NAME = 8;
  private static final int SPARSE_VALUES = 1;
  private static final int VALUE_INFO_NAME = 1;
  private static final int VALUE_INFO_TYPE = 2;
  private static final int TYPE_TENSOR = 1;
  private static final int TENSOR_TYPE_SHAPE = 2;

  /**
   * Reads {@code modelFile}.
   *
   * @throws IOException when it cannot be read or is not a protobuf message
   */
  static GraphInputs read(Path modelFile) throws IOException {
    if (Files.size(modelFile) > Integer.MAX_VALUE) {
      return NONE; // past what one protobuf message holds: a model that large keeps weights outside
    }
    // a file stream skips the weights by seeking, so they are neither read nor kept mapped
    try (InputStream file = new FileInputStream(modelFile.toFile())) {
      CodedInputStream in = CodedInputStream.newInstance(file);
      in.setSizeLimit(Integer.MAX_VALUE);
      Set<String> inputs = new HashSet<>();
      Set<String> shapeless = new HashSet<>();
      Set<String> initialized = new HashSet<>();
      for (int tag; (tag = in.readTag()) != 0; ) {
        if (tag == lengthDelimited(MODEL_GRAPH)) {
          int limit = in.pushLimit(in.readRawVarint32());
          graph(in, inputs, shapeless, initialized);
          in.popLimit(limit);
        } else if (!in.skipField(tag)) {
          break;
        }
      }
      shapeless.retainAll(inputs);
      initialized.retainAll(inputs);
      return new GraphInputs(Set.copyOf(shapeless), Set.copyOf(initialized));
    }
  }

  private static void graph(
      CodedInputStream in, Set<String> inputs, Set<String> shapeless, Set<String> initialized)
      throws IOException {
    for (int tag; (tag = in.readTag()) != 0; ) {
      if (tag == lengthDelimited(GRAPH_INPUT)) {
        int limit = in.pushLimit(in.readRawVarint32());
        valueInfo(in, inputs, shapeless);
        in.popLimit(limit);
      } else if (tag == lengthDelimited(GRAPH_INITIALIZER)) {
        int limit = in.pushLimit(in.readRawVarint32());
        String name = tensorName(in);
        if (name != null) {
          initialized.add(name);
        }
        in.popLimit(limit);
      } else if (tag == lengthDelimited(GRAPH_SPARSE_INITIALIZER)) {
        int limit = in.pushLimit(in.readRawVarint32());
        for (int t; (t = in.readTag()) != 0; ) {
          if (t == lengthDelimited(SPARSE_VALUES)) {
            int inner = in.pushLimit(in.readRawVarint32());
            String name = tensorName(in);
            if (name != null) {
              initialized.add(name);
            }
            in.popLimit(inner);
          } else {
            in.skipField(t);
          }
        }
        in.popLimit(limit);
      } else if (!in.skipField(tag)) {
        return;
      }
    }
  }

  /** The name of the {@code TensorProto} at hand (up to its limit), or null. */
  private static String tensorName(CodedInputStream in) throws IOException {
    String name = null;
    for (int tag; (tag = in.readTag()) != 0; ) {
      if (tag == lengthDelimited(TENSOR_NAME)) {
        name = in.readStringRequireUtf8();
      } else {
        in.skipField(tag);
      }
    }
    return name;
  }

  private static void valueInfo(CodedInputStream in, Set<String> inputs, Set<String> shapeless)
      throws IOException {
    String name = null;
    boolean tensor = false;
    boolean shaped = false;
    for (int tag; (tag = in.readTag()) != 0; ) {
      if (tag == lengthDelimited(VALUE_INFO_NAME)) {
        name = in.readStringRequireUtf8();
      } else if (tag == lengthDelimited(VALUE_INFO_TYPE)) {
        int limit = in.pushLimit(in.readRawVarint32());
        for (int t; (t = in.readTag()) != 0; ) {
          if (t == lengthDelimited(TYPE_TENSOR)) {
            tensor = true;
            int inner = in.pushLimit(in.readRawVarint32());
            for (int u; (u = in.readTag()) != 0; ) {
              shaped |= u == lengthDelimited(TENSOR_TYPE_SHAPE);
              in.skipField(u);
            }
            in.popLimit(inner);
          } else {
            in.skipField(t);
          }
        }
        in.popLimit(limit);
      } else {
        in.skipField(tag);
      }
    }
    if (name != null) {
      inputs.add(name);
      if (tensor && !shaped) {
        shapeless.add(name);
      }
    }
  }

  private static int lengthDelimited(int field) {
    return (field << 3) | WireFormat.WIRETYPE_LENGTH_DELIMITED;
  }
}
