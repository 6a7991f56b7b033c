package dev.modelkeeper.onnx;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;
import org.junit.jupiter.api.Test;

class TensorTest {

  @Test
  void of_shapeAndDataLengthDisagree_throwsInvalidInput() {
    assertThatThrownBy(() -> Tensor.ofFloats("x", new long[] {2, 3}, 1, 2, 3, 4, 5))
        .isInstanceOf(InvalidInputException.class)
        .hasMessageContaining("shape [2, 3] (6 elements) but 5 data elements");
  }

  @Test
  void of_arrayTypeDisagreesWithDatatype_throwsInvalidInput() {
    assertThatThrownBy(() -> Tensor.of("x", Datatype.FP64, new long[] {1}, new float[] {1}))
        .isInstanceOf(InvalidInputException.class)
        .hasMessageContaining("declared FP64");
  }

  @Test
  void of_negativeDimension_throwsInvalidInput() {
    assertThatThrownBy(() -> Tensor.ofInts("x", new long[] {-1}, 1))
        .isInstanceOf(InvalidInputException.class)
        .hasMessageContaining("negative dimension");
  }

  @Test
  void of_overflowingShape_throwsInvalidInput() {
    assertThatThrownBy(() -> Tensor.ofInts("x", new long[] {1L << 40, 1L << 40}))
        .isInstanceOf(InvalidInputException.class)
        .hasMessageContaining("too large");
  }

  @Test
  void fromValues_nestedLists_flattenRowMajor() {
    Tensor t =
        Tensor.fromValues(
            "x",
            Datatype.INT64,
            new long[] {2, 2},
            List.of(List.of(1, 2L), List.of(BigInteger.valueOf(3), 4.0)));
    assertThat(t.longs()).containsExactly(1, 2, 3, 4);
  }

  @Test
  void fromValues_uint8OutOfRange_throwsInvalidInput() {
    assertThatThrownBy(() -> Tensor.fromValues("x", Datatype.UINT8, new long[] {1}, List.of(256)))
        .isInstanceOf(InvalidInputException.class)
        .hasMessageContaining("outside the UINT8 range");
  }

  @Test
  void fromValues_uint8_roundTripsAsUnsigned() {
    Tensor t = Tensor.fromValues("x", Datatype.UINT8, new long[] {2}, List.of(0, 255));
    assertThat(t.bytes()).containsExactly((byte) 0, (byte) -1);
    assertThat(t.toList()).containsExactly(0, 255);
  }

  @Test
  void fromValues_fractionForIntegerType_throwsInvalidInput() {
    assertThatThrownBy(() -> Tensor.fromValues("x", Datatype.INT32, new long[] {1}, List.of(1.5)))
        .isInstanceOf(InvalidInputException.class)
        .hasMessageContaining("integral INT32");
  }

  @Test
  void fromValues_stringForNumber_throwsInvalidInput() {
    assertThatThrownBy(() -> Tensor.fromValues("x", Datatype.FP32, new long[] {1}, List.of("1")))
        .isInstanceOf(InvalidInputException.class)
        .hasMessageContaining("expected a FP32 number");
  }

  @Test
  void fromValues_numberForBool_throwsInvalidInput() {
    assertThatThrownBy(() -> Tensor.fromValues("x", Datatype.BOOL, new long[] {1}, List.of(1)))
        .isInstanceOf(InvalidInputException.class)
        .hasMessageContaining("expected a BOOL");
  }

  @Test
  void fromValues_countDisagreesWithShape_throwsInvalidInput() {
    assertThatThrownBy(
            () -> Tensor.fromValues("x", Datatype.BYTES, new long[] {3}, List.of("a", "b")))
        .isInstanceOf(InvalidInputException.class);
  }

  @Test
  void fromValues_mixedKinds_convertEachDatatype() {
    assertThat(
            Tensor.fromValues("b", Datatype.BOOL, new long[] {2}, List.of(true, false)).booleans())
        .containsExactly(true, false);
    assertThat(Tensor.fromValues("s", Datatype.BYTES, new long[] {1}, List.of("hé")).strings())
        .containsExactly("hé");
    assertThat(Tensor.fromValues("d", Datatype.FP64, new long[] {2}, List.of(1, 2.5)).doubles())
        .containsExactly(1.0, 2.5);
    assertThat(Tensor.fromValues("i", Datatype.INT8, new long[] {1}, List.of(-128)).toList())
        .containsExactly(-128);
    assertThat(Tensor.fromValues("h", Datatype.INT16, new long[] {1}, List.of(-300)).shorts())
        .containsExactly((short) -300);
  }

  @Test
  void fromValues_bytesWithALoneSurrogate_isInvalidInput_aPairIsKept() {
    assertThatThrownBy(
            () -> Tensor.fromValues("s", Datatype.BYTES, new long[] {2}, List.of("ok", "a\ud800")))
        .isInstanceOf(InvalidInputException.class)
        .hasMessageContaining("element 1 holds a lone UTF-16 surrogate (U+D800) at character 1");
    assertThat(
            Tensor.fromValues("s", Datatype.BYTES, new long[] {1}, List.of("\ud83d\ude00"))
                .strings())
        .containsExactly("\ud83d\ude00");
  }

  @Test
  void bytesBinarySize_isWhatTheEncoderWrites_forAnyBytes() {
    byte[][] elements = {
      {}, {'a'}, {0}, {(byte) 0xff, (byte) 0xfe}, {(byte) 0xc3, (byte) 0xa9}, new byte[300]
    };
    for (byte[] b : elements) {
      byte[][] one = {b};
      assertThat(Datatype.BYTES.toBinary(one))
          .as("%d bytes", b.length)
          .hasSize(Datatype.BYTES.binarySize(one))
          .hasSize(4 + b.length);
    }
  }

  @Test
  void bytes_binaryRoundTrip_keepsEveryByte() {
    byte[] all = new byte[256];
    for (int i = 0; i < 256; i++) {
      all[i] = (byte) i;
    }
    byte[][] data = {all, {}, {(byte) 0xff, (byte) 0xfe}};
    byte[] wire = Datatype.BYTES.toBinary(data);
    Object back =
        Datatype.BYTES.fromBinary("s", ByteBuffer.wrap(wire).order(ByteOrder.LITTLE_ENDIAN), 3);
    assertThat((byte[][]) back).isEqualTo(data);
  }

  @Test
  void parse_unsupportedDatatype_throwsInvalidInput() {
    assertThat(Datatype.parse("fp32")).isEqualTo(Datatype.FP32);
    assertThat(Datatype.parse("fp16")).isEqualTo(Datatype.FP16);
    assertThatThrownBy(() -> Datatype.parse("FP8"))
        .isInstanceOf(InvalidInputException.class)
        .hasMessageContaining("supported: BOOL, UINT8, UINT16, UINT32, UINT64, INT8");
    assertThatThrownBy(() -> Datatype.parse(null)).isInstanceOf(InvalidInputException.class);
  }

  @Test
  void equals_sameContent_isEqualAndTypedAccessorRejectsOtherType() {
    Tensor a = Tensor.ofFloats("x", new long[] {2}, 1, 2);
    assertThat(a).isEqualTo(Tensor.ofFloats("x", new long[] {2}, 1, 2));
    assertThat(a).isNotEqualTo(Tensor.ofFloats("x", new long[] {1, 2}, 1, 2));
    assertThat(a.withName("y").name()).isEqualTo("y");
    assertThatThrownBy(a::ints).isInstanceOf(IllegalStateException.class);
  }
}
