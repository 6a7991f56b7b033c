package dev.modelkeeper.server.grpc;

import com.google.protobuf.ByteString;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.UnsafeByteOperations;
import dev.modelkeeper.onnx.Datatype;
import dev.modelkeeper.onnx.InvalidInputException;
import dev.modelkeeper.onnx.Tensor;
import dev.modelkeeper.server.engine.InferenceService;
import dev.modelkeeper.server.errors.BadRequestException;
import dev.modelkeeper.server.grpc.sharedmemory.GrpcSharedMemory;
import dev.modelkeeper.server.request.InferRequest;
import dev.modelkeeper.server.request.RequestTrace;
import dev.modelkeeper.server.request.SharedMemoryRef;
import dev.modelkeeper.server.request.TensorInputs;
import dev.modelkeeper.server.sharedmemory.SharedMemoryRegions;
import java.math.BigInteger;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Converts gRPC inference messages to and from {@link InferRequest}s and results. Inputs come as
 * raw contents (one little-endian buffer per input, as tritonclient sends them) or typed contents
 * (the {@code InferTensorContents} field of each input's datatype; FP16 and BF16 have none);
 * outputs always answer in {@code raw_output_contents}, as Triton does. Stateless and thread-safe.
 */
final class GrpcTensors {

  /** The typed-contents field of each datatype, e.g. {@code int_contents} for INT8 to INT32. */
  private static final Map<Datatype, FieldDescriptor> CONTENTS = new LinkedHashMap<>();

  static {
    for (Datatype d : Datatype.values()) {
      if (d.oipContentsField() != null) {
        CONTENTS.put(d, InferTensorContents.getDescriptor().findFieldByName(d.oipContentsField()));
      }
    }
  }

  private GrpcTensors() {}

  /**
   * The request as the inference path takes it; inputs placed in shared memory are copied out of
   * {@code regions}.
   */
  static InferRequest decode(ModelInferRequest in, SharedMemoryRegions regions) {
    Set<String> outputs = new HashSet<>(); // read first: a refused output costs no decoding
    Map<String, Integer> classifications = new HashMap<>();
    Map<String, SharedMemoryRef> shared = new HashMap<>();
    for (ModelInferRequest.InferRequestedOutputTensor o : in.getOutputsList()) {
      SharedMemoryRef ref =
          GrpcSharedMemory.ref(o.getParametersMap(), "output '" + o.getName() + "'");
      if (ref != null) {
        shared.put(o.getName(), ref);
      }
      InferParameter k = o.getParametersMap().get(TensorInputs.CLASSIFICATION);
      if (k != null) {
        String where = "output '" + o.getName() + "' parameters";
        if (k.getParameterChoiceCase() != InferParameter.ParameterChoiceCase.INT64_PARAM) {
          throw new BadRequestException(
              where + " 'classification' must be a whole number of classes (int64_param)");
        }
        classifications.put(o.getName(), TensorInputs.classCount(k.getInt64Param(), where));
      }
      outputs.add(o.getName());
    }
    List<SharedMemoryRef> placed = new ArrayList<>(in.getInputsCount());
    for (int i = 0; i < in.getInputsCount(); i++) {
      ModelInferRequest.InferInputTensor t = in.getInputs(i);
      placed.add(GrpcSharedMemory.ref(t.getParametersMap(), "input '" + t.getName() + "'"));
    }
    int notPlaced = (int) placed.stream().filter(r -> r == null).count();
    boolean raw = in.getRawInputContentsCount() > 0;
    if (raw && in.getRawInputContentsCount() != notPlaced) {
      throw new InvalidInputException(
          "the request has "
              + notPlaced
              + " inputs outside shared memory but "
              + in.getRawInputContentsCount()
              + " raw_input_contents; send one per such input, in order");
    }
    Map<String, Tensor> inputs = new LinkedHashMap<>();
    for (int i = 0, r = 0; i < in.getInputsCount(); i++) {
      ModelInferRequest.InferInputTensor t = in.getInputs(i);
      String name = t.getName();
      if (name.isEmpty()) {
        throw new BadRequestException("inputs[" + i + "] needs a name");
      }
      Datatype datatype = Datatype.parse(t.getDatatype());
      long[] shape = shape(name, t.getShapeList());
      Tensor tensor;
      if (placed.get(i) != null) {
        tensor = regions.read(name, datatype, shape, placed.get(i));
      } else if (raw) {
        if (t.hasContents()) {
          throw new InvalidInputException(
              "contents field must not be specified when using raw_input_contents for '"
                  + name
                  + "' for model '"
                  + in.getModelName()
                  + "': send every input in raw_input_contents or every input in contents");
        }
        tensor =
            TensorInputs.read(
                name,
                datatype,
                shape,
                in.getRawInputContents(r++).asReadOnlyByteBuffer().order(ByteOrder.LITTLE_ENDIAN));
      } else {
        tensor = typed(name, datatype, shape, t.getContents());
      }
      if (inputs.put(name, tensor) != null) {
        throw new InvalidInputException("input '" + name + "' is given more than once");
      }
    }
    String id = in.getId().isEmpty() ? null : in.getId();
    return new InferRequest(
        id, inputs, outputs, Map.of(), true, classifications, RequestTrace.NONE, shared);
  }

  /**
   * The heap the BYTES inputs of {@code in} take once decoded beyond their bytes (a string per
   * element), to count before they exist: each raw element needs at least its 4-byte length.
   */
  static long stringOverhead(ModelInferRequest in) {
    long elements = 0;
    for (int i = 0; i < in.getInputsCount(); i++) {
      ModelInferRequest.InferInputTensor t = in.getInputs(i);
      if (Datatype.tryParse(t.getDatatype()) == Datatype.BYTES) { // as decode will read it
        elements +=
            i < in.getRawInputContentsCount()
                ? in.getRawInputContents(i).size() / 4
                : t.getContents().getBytesContentsCount();
      }
    }
    return elements * TensorInputs.STRING_OVERHEAD_BYTES;
  }

  /**
   * The response to {@code result}, outputs placed in shared memory written into {@code regions}.
   */
  static ModelInferResponse encode(InferenceService.Result result, SharedMemoryRegions regions) {
    InferRequest request = result.request();
    ModelInferResponse.Builder out =
        ModelInferResponse.newBuilder()
            .setModelName(result.modelName())
            .setModelVersion(result.outcome().version());
    if (request.id() != null) {
      out.setId(request.id());
    }
    for (Tensor t : result.outcome().outputs().values()) {
      ModelInferResponse.InferOutputTensor.Builder o =
          out.addOutputsBuilder().setName(t.name()).setDatatype(t.datatype().oipName());
      for (long d : t.shape()) {
        o.addShape(d);
      }
      SharedMemoryRef ref = request.sharedOutputs().get(t.name());
      if (ref != null) { // its place in raw_output_contents kept, empty, as the client counts them
        long written = regions.write(t, ref);
        o.putParameters(SharedMemoryRef.REGION, text(ref.region()))
            .putParameters(SharedMemoryRef.BYTE_SIZE, whole(written))
            .putParameters(SharedMemoryRef.OFFSET, whole(ref.offset()));
        out.addRawOutputContents(ByteString.EMPTY);
        continue;
      }
      out.addRawOutputContents(UnsafeByteOperations.unsafeWrap(t.datatype().toBinary(t.data())));
    }
    return out.build();
  }

  private static InferParameter text(String s) {
    return InferParameter.newBuilder().setStringParam(s).build();
  }

  private static InferParameter whole(long n) {
    return InferParameter.newBuilder().setInt64Param(n).build();
  }

  private static long[] shape(String name, List<Long> dims) {
    if (dims.size() > TensorInputs.MAX_RANK) {
      throw new InvalidInputException(
          "input '"
              + name
              + "' has "
              + dims.size()
              + " dimensions; at most "
              + TensorInputs.MAX_RANK);
    }
    long[] shape = new long[dims.size()];
    for (int i = 0; i < shape.length; i++) {
      shape[i] = dims.get(i);
      if (shape[i] < 0) {
        throw new InvalidInputException("input '" + name + "' has a negative dimension " + dims);
      }
    }
    TensorInputs.elementCount(name, shape);
    return shape;
  }

  private static Tensor typed(String name, Datatype datatype, long[] shape, InferTensorContents c) {
    FieldDescriptor field = CONTENTS.get(datatype);
    if (field == null) {
      throw new InvalidInputException(
          "input '"
              + name
              + "' is "
              + datatype
              + ", which has no typed contents field; send it in raw_input_contents");
    }
    for (Map.Entry<FieldDescriptor, Object> e : c.getAllFields().entrySet()) {
      if (!e.getKey().equals(field)) {
        throw new InvalidInputException(
            "input '"
                + name
                + "' is "
                + datatype
                + ", whose typed contents go in '"
                + field.getName()
                + "', but it has '"
                + e.getKey().getName()
                + "'");
      }
    }
    List<?> values = (List<?>) c.getField(field);
    List<Object> plain = new ArrayList<>(values.size());
    for (Object v : values) {
      plain.add(plain(datatype, v));
    }
    return Tensor.fromValues(name, datatype, shape, plain);
  }

  /**
   * A typed-contents value as a number or bytes: protobuf hands uint32 and uint64 values over in
   * the bits of a signed int or long.
   */
  private static Object plain(Datatype datatype, Object v) {
    if (v instanceof ByteString) {
      return ((ByteString) v).toByteArray();
    }
    if (datatype == Datatype.UINT32 && v instanceof Integer) {
      return Integer.toUnsignedLong((Integer) v);
    }
    if (datatype == Datatype.UINT64 && v instanceof Long && (Long) v < 0) {
      return new BigInteger(Long.toUnsignedString((Long) v));
    }
    return v;
  }

  /** A repository parameter's value: a Boolean, Long, String or byte[]; null when unset. */
  static Object value(ModelRepositoryParameter p) {
    return switch (p.getParameterChoiceCase()) {
      case BOOL_PARAM -> p.getBoolParam();
      case INT64_PARAM -> p.getInt64Param();
      case STRING_PARAM -> p.getStringParam();
      case BYTES_PARAM -> p.getBytesParam().toByteArray();
      case PARAMETERCHOICE_NOT_SET -> null;
    };
  }

  /** A boolean request parameter, or false. */
  static boolean flag(Map<String, InferParameter> params, String key) {
    InferParameter p = params.get(key);
    return p != null && p.getBoolParam();
  }
}
