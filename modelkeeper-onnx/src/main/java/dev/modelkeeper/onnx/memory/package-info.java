/**
 * What models cost in memory: the process's RSS ({@code ProcessMemory}), probes around loads and
 * runs ({@code MemoryMeter}), the measured costs kept across restarts ({@code MemoryCosts}, {@code
 * MemoryCost}), and the seam through which a run reserves its working memory ({@code
 * WorkingMemory}).
 */
package dev.modelkeeper.onnx.memory;
