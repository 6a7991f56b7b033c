package dev.modelkeeper.onnx.writer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import org.junit.jupiter.api.Test;

/** Byte-level checks of the protobuf encoding against hand-worked examples of the wire format. */
class ProtoMessageTest {

  @Test
  void int64_smallAndMultiByteValues_encodeAsVarints() {
    assertThat(new ProtoMessage().int64(1, 150).toByteArray()).containsExactly(0x08, 0x96, 0x01);
    assertThat(new ProtoMessage().int64(2, 300).toByteArray()).containsExactly(0x10, 0xAC, 0x02);
  }

  @Test
  void int64_negative_takesTenBytes() {
    byte[] b = new ProtoMessage().int64(1, -1).toByteArray();
    assertThat(b).hasSize(11);
    assertThat(b[10]).isEqualTo((byte) 0x01);
  }

  @Test
  void string_isLengthDelimited() {
    assertThat(new ProtoMessage().string(2, "testing").toByteArray())
        .containsExactly(0x12, 0x07, 't', 'e', 's', 't', 'i', 'n', 'g');
  }

  @Test
  void message_andPackedField_nestWithLengths() {
    ProtoMessage inner = new ProtoMessage().int64(1, 150);
    assertThat(new ProtoMessage().message(3, inner).toByteArray())
        .containsExactly(0x1A, 0x03, 0x08, 0x96, 0x01);
    assertThat(new ProtoMessage().packedInt64(4, new long[] {3, 270, 86942}).toByteArray())
        .containsExactly(0x22, 0x06, 0x03, 0x8E, 0x02, 0x9E, 0xA7, 0x05);
  }

  @Test
  void float32_isLittleEndianFixed32() {
    assertThat(new ProtoMessage().float32(2, 1.0f).toByteArray())
        .containsExactly(0x15, 0x00, 0x00, 0x80, 0x3F);
  }

  @Test
  void length_ofNestedMessages_isWhatIsWritten() throws Exception {
    ProtoMessage inner = new ProtoMessage().string(1, "x".repeat(200)).int64(2, -5);
    ProtoMessage outer =
        new ProtoMessage().message(1, inner).message(2, new ProtoMessage()).float32(3, 2.5f);
    ByteArrayOutputStream streamed = new ByteArrayOutputStream();
    outer.writeTo(new ProtoWriter(streamed));
    assertThat(outer.length()).isEqualTo(streamed.size());
    assertThat(streamed.toByteArray()).isEqualTo(outer.toByteArray());
    // 200 bytes of string: a two-byte length
    assertThat(ProtoWriter.varintSize(200)).isEqualTo(2);
    assertThat(ProtoWriter.varintSize(-1)).isEqualTo(10);
  }

  @Test
  void body_writingOtherThanItsLength_isRefused() {
    FieldBody short1 =
        new FieldBody() {
          @Override
          public long length() {
            return 2;
          }

          @Override
          public void writeTo(ProtoWriter out) throws IOException {
            out.raw(new byte[] {1}, 0, 1);
          }
        };
    assertThatThrownBy(() -> new ProtoMessage().lengthDelimited(1, short1).toByteArray())
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("wrote 1 bytes after announcing 2");
  }
}
