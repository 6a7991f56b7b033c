/**
 * Compressed gRPC messages: gzip and deflate in both directions, inflated within the message size
 * limit. Part of the grpc transport.
 */
package dev.modelkeeper.server.grpc.compression;
