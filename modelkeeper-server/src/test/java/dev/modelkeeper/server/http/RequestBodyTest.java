package dev.modelkeeper.server.http;

import static org.assertj.core.api.Assertions.assertThat;

import dev.modelkeeper.server.admission.DirectBuffers;
import dev.modelkeeper.server.admission.RequestBytes;
import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;

/**
 * Reading a received body: the next bytes as a read-only buffer (a view within one block), or
 * copied once.
 */
class RequestBodyTest {

  private static RequestBody body(int length, int expected) {
    RequestBody body = new RequestBody(RequestBytes.untracked(), expected);
    byte[] bytes = new byte[length];
    for (int i = 0; i < length; i++) {
      bytes[i] = (byte) i;
    }
    body.append(ByteBuffer.wrap(bytes));
    return body;
  }

  @Test
  void readBuffer_withinOneBlock_returnsTheNextBytesReadOnly() {
    RequestBody body = body(1000, 1000);
    RequestBody.Stream in = body.stream();
    assertThat(in.readNBytes(10)).hasSize(10);
    ByteBuffer rest = in.readBuffer(990);
    assertThat(rest.remaining()).isEqualTo(990);
    assertThat(rest.get(0)).isEqualTo((byte) 10);
    assertThat(rest.isReadOnly()).isTrue();
    for (int i = 0; i < 990; i++) {
      assertThat(rest.get(i)).isEqualTo((byte) (i + 10));
    }
    assertThat(in.read()).isEqualTo(-1);
  }

  @Test
  void readBuffer_acrossBlocks_copiesEveryByteInOrder() {
    int length = 256 * 1024 + 100; // two blocks of an unannounced length
    RequestBody body = body(length, -1);
    assertThat(body.buffers()).hasSize(2);
    RequestBody.Stream in = body.stream();
    in.readNBytes(5);
    ByteBuffer rest = in.readBuffer(length - 5);
    assertThat(rest.remaining()).isEqualTo(length - 5);
    for (int i = 0; i < rest.remaining(); i++) {
      assertThat(rest.get(i)).isEqualTo((byte) (i + 5));
    }
  }

  @Test
  void largeAnnouncedBody_isHeldOffHeap_inOneBuffer_thatGoesBackToItsPoolWhenReturned() {
    DirectBuffers pool = new DirectBuffers(1 << 20);
    RequestBytes bytes = RequestBytes.untracked();
    int length = 100_000;
    RequestBody body = new RequestBody(bytes, length, pool);
    byte[] data = new byte[length];
    for (int i = 0; i < length; i++) {
      data[i] = (byte) (i * 7);
    }
    body.append(ByteBuffer.wrap(data, 0, 30_000)); // as the chunks arrive
    body.append(ByteBuffer.wrap(data, 30_000, length - 30_000));
    RequestBody.Stream in = body.stream();
    in.readNBytes(3);
    ByteBuffer rest = in.readBuffer(length - 3);
    assertThat(rest.isDirect()).isTrue();
    assertThat(rest.isReadOnly()).isTrue();
    for (int i = 0; i < rest.remaining(); i++) {
      assertThat(rest.get(i)).isEqualTo(data[i + 3]);
    }
    assertThat(pool.idleBytes()).isZero();

    bytes.release();

    assertThat(pool.idleBytes()).isEqualTo(128 * 1024);
  }

  @Test
  void offHeapBody_longerThanAnnounced_keepsEveryByteInOrder() {
    RequestBody body = new RequestBody(RequestBytes.untracked(), 70_000, new DirectBuffers(0));
    byte[] data = new byte[90_000];
    for (int i = 0; i < data.length; i++) {
      data[i] = (byte) i;
    }
    body.append(ByteBuffer.wrap(data, 0, 60_000));
    body.append(ByteBuffer.wrap(data, 60_000, 30_000));
    assertThat(body.length()).isEqualTo(90_000);
    assertThat(body.stream().readNBytes(90_000)).isEqualTo(data);
  }

  @Test
  void smallBody_staysOnTheHeap() {
    RequestBody body = new RequestBody(RequestBytes.untracked(), 1000, new DirectBuffers(1 << 20));
    body.append(ByteBuffer.wrap(new byte[1000]));
    assertThat(body.stream().readBuffer(1000).isDirect()).isFalse();
  }

  @Test
  void readNBytes_pastTheEnd_returnsWhatIsLeft() {
    RequestBody.Stream in = body(100, 100).stream();
    assertThat(in.readNBytes(60)).hasSize(60);
    byte[] rest = in.readNBytes(60);
    assertThat(rest).hasSize(40);
    assertThat(rest[0]).isEqualTo((byte) 60);
    assertThat(in.readBuffer(10).remaining()).isZero();
  }
}
