/**
 * What went wrong with a request, protocol-neutral: {@code Failure} and its kinds, the server's own
 * exceptions ({@code ServerException}, each carrying its kind), and {@code PathRedaction}, which
 * keeps the server's paths out of answers. Uses core and onnx only; every room may use it.
 */
package dev.modelkeeper.server.errors;
