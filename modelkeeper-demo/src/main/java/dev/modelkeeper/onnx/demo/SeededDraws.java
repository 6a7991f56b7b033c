package dev.modelkeeper.onnx.demo;

import dev.modelkeeper.onnx.writer.FloatGenerator;
import java.util.SplittableRandom;

/**
 * One sequence of draws from a {@link SplittableRandom} seeded with a fixed seed, handed out in
 * consecutive stretches as {@link FloatGenerator}s, so a model's seeded weights are generated while
 * the model is written instead of being held in memory. Written in the order they were handed out,
 * the stretches continue one generator without going back; a stretch asked for out of order (a
 * second write of the model) starts the sequence again from the seed and skips to its place. Not
 * thread-safe: the generators of one instance run on one thread.
 */
final class SeededDraws {

  private final long seed;
  private long handedOut; // draws given to generators so far
  private SplittableRandom random;
  private long position; // draws taken from random

  SeededDraws(long seed) {
    this.seed = seed;
  }

  /**
   * The next {@code count} draws of the sequence, each uniform in ±{@code bound} and rounded to
   * float.
   */
  FloatGenerator uniform(long count, double bound) {
    long start = handedOut;
    handedOut += count;
    return (first, into, n) -> {
      if (first < 0 || first + n > count) {
        throw new IndexOutOfBoundsException(
            "values " + first + " to " + (first + n) + " of " + count);
      }
      seek(start + first);
      for (int i = 0; i < n; i++) {
        into[i] = (float) random.nextDouble(-bound, bound);
      }
      position += n;
    };
  }

  /** Positions the generator before draw {@code index}; each draw takes one step of the seed. */
  private void seek(long index) {
    if (random == null || position > index) {
      random = new SplittableRandom(seed);
      position = 0;
    }
    for (; position < index; position++) {
      random.nextDouble();
    }
  }
}
