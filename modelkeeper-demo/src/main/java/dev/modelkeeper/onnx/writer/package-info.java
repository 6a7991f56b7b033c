/**
 * A small ONNX model writer: a streaming Protocol Buffers encoder and {@link
 * dev.modelkeeper.onnx.writer.OnnxGraphBuilder}, enough to express dense networks and simple
 * element-wise graphs (IR version 8, opset 13). Models are streamed to their file (each embedded
 * message's length is computed before it is written), so writing one needs little heap.
 */
package dev.modelkeeper.onnx.writer;
