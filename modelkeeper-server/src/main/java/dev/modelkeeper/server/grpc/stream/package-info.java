/**
 * gRPC {@code ModelStreamInfer}: inference requests on one bidirectional stream, answered in the
 * order they came, each by its response or its error, with the stream's reading paced by the
 * client's. Part of the grpc transport.
 */
package dev.modelkeeper.server.grpc.stream;
