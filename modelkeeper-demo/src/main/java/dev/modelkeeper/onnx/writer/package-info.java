/**
 * A small ONNX model writer: a Protocol Buffers encoder and {@link
 * dev.modelkeeper.onnx.writer.OnnxGraphBuilder}, enough to express dense networks and simple
 * element-wise graphs (IR version 8, opset 13).
 */
package dev.modelkeeper.onnx.writer;
