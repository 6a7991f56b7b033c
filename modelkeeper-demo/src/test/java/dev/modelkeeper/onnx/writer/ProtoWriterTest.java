package dev.modelkeeper.onnx.writer;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** Byte-level checks of the protobuf encoding against hand-worked examples of the wire format. */
class ProtoWriterTest {

  @Test
  void int64_smallAndMultiByteValues_encodeAsVarints() {
    assertThat(new ProtoWriter().int64(1, 150).toByteArray()).containsExactly(0x08, 0x96, 0x01);
    assertThat(new ProtoWriter().int64(2, 300).toByteArray()).containsExactly(0x10, 0xAC, 0x02);
  }

  @Test
  void int64_negative_takesTenBytes() {
    byte[] b = new ProtoWriter().int64(1, -1).toByteArray();
    assertThat(b).hasSize(11);
    assertThat(b[10]).isEqualTo((byte) 0x01);
  }

  @Test
  void string_isLengthDelimited() {
    assertThat(new ProtoWriter().string(2, "testing").toByteArray())
        .containsExactly(0x12, 0x07, 't', 'e', 's', 't', 'i', 'n', 'g');
  }

  @Test
  void message_andPackedField_nestWithLengths() {
    ProtoWriter inner = new ProtoWriter().int64(1, 150);
    assertThat(new ProtoWriter().message(3, inner).toByteArray())
        .containsExactly(0x1A, 0x03, 0x08, 0x96, 0x01);
    assertThat(new ProtoWriter().packedInt64(4, new long[] {3, 270, 86942}).toByteArray())
        .containsExactly(0x22, 0x06, 0x03, 0x8E, 0x02, 0x9E, 0xA7, 0x05);
  }

  @Test
  void float32_isLittleEndianFixed32() {
    assertThat(new ProtoWriter().float32(2, 1.0f).toByteArray())
        .containsExactly(0x15, 0x00, 0x00, 0x80, 0x3F);
  }
}
