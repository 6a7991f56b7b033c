/**
 * Model control as Triton's repository extension has it: a load that replaces a model's
 * configuration, and its files, until the next load; an unload. Protocol-neutral: the REST and gRPC
 * transports turn their load and unload parameters into the calls here. Uses the engine.
 */
package dev.modelkeeper.server.control;
