/**
 * Compressed REST bodies: requests in {@code Content-Encoding: gzip} or {@code deflate} inflated
 * after they arrive, step by step within the request size limit and the in-flight budget, and
 * answers compressed for clients whose {@code Accept-Encoding} asks for it. Part of the http room.
 */
package dev.modelkeeper.server.http.compression;
