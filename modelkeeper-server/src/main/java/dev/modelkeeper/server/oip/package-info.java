/**
 * The Open Inference Protocol over REST: health, metadata and inference, JSON and the binary tensor
 * data extension, decoded as it streams in. A transport: uses the engine and the http plumbing,
 * never another transport.
 */
package dev.modelkeeper.server.oip;
