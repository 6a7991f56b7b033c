package dev.modelkeeper.server.grpc;

import com.google.protobuf.CodedInputStream;
import com.google.protobuf.UnsafeByteOperations;
import dev.modelkeeper.server.admission.DirectBuffers;
import io.grpc.HasByteBuffer;
import io.grpc.KnownLength;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import java.io.IOException;
import java.io.InputStream;
import java.nio.BufferOverflowException;
import java.nio.ByteBuffer;

/**
 * Parses a large {@link ModelInferRequest} (from {@link DirectBuffers#MIN_BYTES}) out of one
 * off-heap buffer, as REST receives a large body: the message is copied once from the transport's
 * buffers into it and parsed with aliasing, so its raw input contents are views of that buffer and
 * reach ONNX Runtime in place. The buffer goes back to its pool when the call's stream closes
 * ({@link GrpcArrivals#holdUntilClosed}). Smaller messages, and messages outside a call of this
 * server's transport, are parsed on the heap as before. Thread-safe.
 */
public final class OffHeapInferRequests
    implements MethodDescriptor.ReflectableMarshaller<ModelInferRequest> {

  private static final int COPY_CHUNK = 16 * 1024;

  private final MethodDescriptor.Marshaller<ModelInferRequest> onHeap;
  private final DirectBuffers offHeap;

  public OffHeapInferRequests(
      MethodDescriptor.Marshaller<ModelInferRequest> onHeap, DirectBuffers offHeap) {
    this.onHeap = onHeap;
    this.offHeap = offHeap;
  }

  @Override
  public Class<ModelInferRequest> getMessageClass() {
    return ModelInferRequest.class;
  }

  @Override
  public InputStream stream(ModelInferRequest value) {
    return onHeap.stream(value);
  }

  @Override
  public ModelInferRequest parse(InputStream in) {
    try {
      int length = in instanceof KnownLength ? in.available() : -1;
      if (length < DirectBuffers.MIN_BYTES || length > DirectBuffers.MAX_BYTES) {
        return onHeap.parse(in);
      }
      ByteBuffer buffer = offHeap.take(length);
      if (!GrpcArrivals.holdUntilClosed(() -> offHeap.give(buffer))) {
        offHeap.give(buffer);
        return onHeap.parse(in);
      }
      fill(buffer, in);
      CodedInputStream coded = UnsafeByteOperations.unsafeWrap(buffer.flip()).newCodedInput();
      coded.enableAliasing(true); // bytes fields become views of the buffer, not copies
      return ModelInferRequest.parseFrom(coded);
    } catch (IOException | BufferOverflowException e) {
      throw Status.INVALID_ARGUMENT
          .withDescription("the ModelInferRequest message is not valid protobuf")
          .asRuntimeException();
    }
  }

  /** Copies the whole of {@code in} into {@code buffer}, from the transport's buffers if it can. */
  private static void fill(ByteBuffer buffer, InputStream in) throws IOException {
    if (in instanceof HasByteBuffer && ((HasByteBuffer) in).byteBufferSupported()) {
      HasByteBuffer direct = (HasByteBuffer) in;
      while (in.available() > 0) {
        ByteBuffer next = direct.getByteBuffer();
        int n = next.remaining();
        buffer.put(next);
        in.skip(n);
      }
      return;
    }
    byte[] chunk = new byte[COPY_CHUNK];
    for (int n = in.read(chunk); n > 0; n = in.read(chunk)) {
      buffer.put(chunk, 0, n);
    }
  }
}
