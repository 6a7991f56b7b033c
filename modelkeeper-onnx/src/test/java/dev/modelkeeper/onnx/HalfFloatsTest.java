package dev.modelkeeper.onnx;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** FP16 and BF16 conversions, checked over every bit pattern and at every rounding midpoint. */
class HalfFloatsTest {

  @Test
  void fp16_everyBitPattern_survivesARoundTripThroughFloatAndDouble() {
    for (int h = 0; h < 0x10000; h++) {
      short bits = (short) h;
      float f = HalfFloats.fp16ToFloat(bits);
      if (Float.isNaN(f)) {
        assertThat(Float.isNaN(HalfFloats.fp16ToFloat(HalfFloats.fp16FromFloat(f)))).isTrue();
        continue;
      }
      assertThat(HalfFloats.fp16FromFloat(f)).as("0x%04x", h).isEqualTo(bits);
      assertThat(HalfFloats.fp16FromDouble(f)).as("0x%04x", h).isEqualTo(bits);
    }
  }

  @Test
  void fp16_midpointsBetweenNeighbours_roundToTheEvenOne() {
    // every pair of neighbouring finite positive values, subnormals included
    for (int h = 0; h < 0x7bff; h++) {
      double low = HalfFloats.fp16ToFloat((short) h);
      double high = HalfFloats.fp16ToFloat((short) (h + 1));
      double mid = (low + high) / 2; // exact in a double
      int even = (h & 1) == 0 ? h : h + 1;
      assertThat(HalfFloats.fp16FromDouble(mid))
          .as("midpoint after 0x%04x", h)
          .isEqualTo((short) even);
      assertThat(HalfFloats.fp16FromDouble(-mid))
          .as("negative midpoint after 0x%04x", h)
          .isEqualTo((short) (even | 0x8000));
      // a hair either side of the midpoint goes to the nearer neighbour
      double hair = (high - low) / 1024;
      assertThat(HalfFloats.fp16FromDouble(mid - hair)).isEqualTo((short) h);
      assertThat(HalfFloats.fp16FromDouble(mid + hair)).isEqualTo((short) (h + 1));
    }
  }

  @Test
  void fp16_knownValues_asIeee754Defines() {
    assertThat(HalfFloats.fp16ToFloat((short) 0x3c00)).isEqualTo(1f);
    assertThat(HalfFloats.fp16ToFloat((short) 0xc000)).isEqualTo(-2f);
    assertThat(HalfFloats.fp16ToFloat((short) 0x7bff)).isEqualTo(65504f);
    assertThat(HalfFloats.fp16ToFloat((short) 0x0001)).isEqualTo(0x1p-24f);
    assertThat(HalfFloats.fp16ToFloat((short) 0x0400)).isEqualTo(0x1p-14f);
    assertThat(HalfFloats.fp16ToFloat((short) 0x7c00)).isEqualTo(Float.POSITIVE_INFINITY);
    assertThat(HalfFloats.fp16FromDouble(65520)).isEqualTo((short) 0x7c00); // rounds past the max
    assertThat(HalfFloats.fp16FromDouble(65519.99)).isEqualTo((short) 0x7bff);
    assertThat(HalfFloats.fp16FromDouble(0x1p-25)).isEqualTo((short) 0); // half the smallest: even
    assertThat(HalfFloats.fp16FromDouble(0x1.0000001p-25)).isEqualTo((short) 1);
    assertThat(HalfFloats.fp16FromDouble(-0.0)).isEqualTo((short) 0x8000);
    assertThat(HalfFloats.fp16ToFloat(HalfFloats.fp16FromDouble(0.1))).isEqualTo(0.0999755859375f);
  }

  @Test
  void fp16FromDouble_roundsOnceNotTwice() {
    // 1 + 2^-11 + 2^-40: above the midpoint of 1 and 1 + 2^-10, so it rounds up; a cast to float
    // first would drop the 2^-40 and land on the midpoint, which rounds to even (down)
    assertThat(HalfFloats.fp16FromDouble(1 + 0x1p-11 + 0x1p-40)).isEqualTo((short) 0x3c01);
    assertThat(HalfFloats.fp16FromDouble(1 + 0x1p-11)).isEqualTo((short) 0x3c00);
  }

  @Test
  void bf16_everyBitPattern_survivesARoundTrip_andMidpointsRoundToEven() {
    for (int h = 0; h < 0x10000; h++) {
      short bits = (short) h;
      float f = HalfFloats.bf16ToFloat(bits);
      if (Float.isNaN(f)) {
        assertThat(Float.isNaN(HalfFloats.bf16ToFloat(HalfFloats.bf16FromDouble(f)))).isTrue();
        continue;
      }
      assertThat(HalfFloats.bf16FromDouble(f)).as("0x%04x", h).isEqualTo(bits);
    }
    for (int h = 0; h < 0x7f7f; h++) {
      double mid =
          ((double) HalfFloats.bf16ToFloat((short) h) + HalfFloats.bf16ToFloat((short) (h + 1)))
              / 2;
      int even = (h & 1) == 0 ? h : h + 1;
      assertThat(HalfFloats.bf16FromDouble(mid)).as("after 0x%04x", h).isEqualTo((short) even);
    }
    assertThat(HalfFloats.bf16ToFloat(HalfFloats.bf16FromDouble(1.0))).isEqualTo(1f);
    assertThat(HalfFloats.bf16FromDouble(1 + 0x1p-8 + 0x1p-40)).isEqualTo((short) 0x3f81);
  }
}
