/**
 * Triton's model repository extension over REST: index, load, unload. A transport: uses the engine
 * and the http plumbing.
 */
package dev.modelkeeper.server.repository;
