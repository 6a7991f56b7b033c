/**
 * How the gRPC endpoint parses its requests: inference requests read off-heap in place, and a
 * message that does not parse refused in one status. Part of the grpc transport.
 */
package dev.modelkeeper.server.grpc.parsing;
