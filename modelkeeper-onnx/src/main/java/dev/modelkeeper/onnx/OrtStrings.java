package dev.modelkeeper.onnx;

import ai.onnxruntime.OnnxTensor;
import ai.onnxruntime.OnnxTensorLike;
import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtException;
import com.sun.jna.Function;
import com.sun.jna.Memory;
import com.sun.jna.Native;
import com.sun.jna.Pointer;
import com.sun.jna.ptr.PointerByReference;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.nio.charset.StandardCharsets;

/**
 * BYTES elements into and out of ONNX Runtime with every byte kept. ONNX Runtime's Java API passes
 * string tensors as Java strings and converts them in modified UTF-8 (the JNI encoding): U+0000
 * becomes {@code c0 80}, a character beyond U+FFFF six bytes of CESU-8, and a string read back ends
 * at its first 0x00 byte. Its C API takes and gives bytes: {@code
 * GetResizedStringTensorElementBuffer} hands out an element's buffer of a given length, {@code
 * GetStringTensorContent} copies all elements out with their offsets. This class calls those
 * through JNA, on tensors the Java API created and still owns (it closes them): so any bytes reach
 * the model, and any bytes come back.
 *
 * <p>An element that is ASCII without NUL is the same in every encoding: it goes through the Java
 * API as a string, with no native call of ours. Reading always takes two calls, whatever the
 * tensor's size. Stateless and thread-safe (each tensor belongs to one run).
 */
final class OrtStrings {

  /** Where the functions called sit in {@code struct OrtApi} (onnxruntime_c_api.h, API 22). */
  private static final int GET_STRING_TENSOR_DATA_LENGTH = 53;

  private static final int GET_STRING_TENSOR_CONTENT = 54;
  private static final int RELEASE_STATUS = 93;
  private static final int GET_RESIZED_STRING_TENSOR_ELEMENT_BUFFER = 252;

  private OrtStrings() {}

  /**
   * An ONNX Runtime string tensor of shape {@code shape} holding exactly {@code data}; the caller
   * closes it.
   */
  static OnnxTensor create(OrtEnvironment env, byte[][] data, long[] shape) throws OrtException {
    String[] plain = new String[data.length];
    boolean allPlain = true;
    for (int i = 0; i < data.length; i++) {
      boolean ascii = plainAscii(data[i]);
      plain[i] = ascii ? new String(data[i], StandardCharsets.ISO_8859_1) : "";
      allPlain &= ascii;
    }
    OnnxTensor tensor = OnnxTensor.createTensor(env, plain, shape);
    if (allPlain) {
      return tensor;
    }
    try {
      Pointer value = CApi.handle(tensor);
      for (int i = 0; i < data.length; i++) {
        if (!plainAscii(data[i])) {
          PointerByReference buffer = new PointerByReference();
          CApi.call(
              GET_RESIZED_STRING_TENSOR_ELEMENT_BUFFER,
              value,
              (long) i,
              (long) data[i].length,
              buffer);
          buffer.getValue().write(0, data[i], 0, data[i].length);
        }
      }
      return tensor;
    } catch (OrtException | RuntimeException | Error e) {
      tensor.close();
      throw e;
    }
  }

  /** The elements of string tensor {@code tensor}, each exactly the bytes ONNX Runtime holds. */
  static byte[][] read(OnnxTensor tensor) throws OrtException {
    long count = 1;
    for (long d : tensor.getInfo().getShape()) {
      count *= d;
    }
    if (count == 0) {
      return new byte[0][];
    }
    Pointer value = CApi.handle(tensor);
    try (Memory length = new Memory(CApi.SIZE_T)) {
      CApi.call(GET_STRING_TENSOR_DATA_LENGTH, value, length);
      long total = length.getLong(0);
      try (Memory content = new Memory(Math.max(1, total));
          Memory offsets = new Memory(count * CApi.SIZE_T)) {
        CApi.call(GET_STRING_TENSOR_CONTENT, value, content, total, offsets, count);
        byte[][] out = new byte[Math.toIntExact(count)][];
        for (int i = 0; i < out.length; i++) {
          long start = offsets.getLong((long) i * CApi.SIZE_T);
          long end = i + 1 < out.length ? offsets.getLong((i + 1L) * CApi.SIZE_T) : total;
          out[i] = content.getByteArray(start, Math.toIntExact(end - start));
        }
        return out;
      }
    }
  }

  private static boolean plainAscii(byte[] bytes) {
    for (byte b : bytes) {
      if (b <= 0) {
        return false;
      }
    }
    return true;
  }

  /** The C API as this class calls it: the functions, a tensor's native value, statuses. */
  private static final class CApi {
    static final int SIZE_T = Native.SIZE_T_SIZE;

    private static final MethodHandle NATIVE_HANDLE;
    private static final Pointer API;
    private static final String UNAVAILABLE;

    static {
      MethodHandle handle = null;
      Pointer api = null;
      String why = null;
      try {
        handle =
            MethodHandles.privateLookupIn(OnnxTensorLike.class, MethodHandles.lookup())
                .findGetter(OnnxTensorLike.class, "nativeHandle", long.class);
        api = OnnxRuntimeLog.ortApi();
        if (SIZE_T != Long.BYTES) {
          why = "size_t is not 8 bytes on this platform";
        }
      } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
        why = e.toString();
      }
      NATIVE_HANDLE = handle;
      API = api;
      UNAVAILABLE = why;
    }

    private CApi() {}

    static Pointer handle(OnnxTensor tensor) throws OrtException {
      available();
      try {
        return new Pointer((long) NATIVE_HANDLE.invokeExact((OnnxTensorLike) tensor));
      } catch (Throwable e) {
        throw new OrtException("cannot reach a string tensor's native value: " + e);
      }
    }

    /** Calls the OrtApi function at {@code index}; an OrtStatus it returns is thrown. */
    static void call(int index, Object... args) throws OrtException {
      available();
      Pointer status = function(index).invokePointer(args);
      if (status != null) {
        String message = OnnxRuntimeLog.errorMessage(API, status);
        function(RELEASE_STATUS).invokeVoid(new Object[] {status});
        throw new OrtException(message);
      }
    }

    private static Function function(int index) {
      return Function.getFunction(API.getPointer((long) index * Native.POINTER_SIZE));
    }

    private static void available() throws OrtException {
      if (UNAVAILABLE != null) {
        throw new OrtException(
            "BYTES elements other than ASCII text need ONNX Runtime's C API, which this process"
                + " cannot call: "
                + UNAVAILABLE);
      }
    }
  }
}
