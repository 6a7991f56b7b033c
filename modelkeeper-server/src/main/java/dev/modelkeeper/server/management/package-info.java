/**
 * The Roboflow-style management API over REST: add, remove, clear, registry. A transport: uses the
 * engine and the http plumbing.
 */
package dev.modelkeeper.server.management;
