/**
 * The process memory cap ({@code MemoryCap}), how it splits between the JVM and the models, and the
 * guard that samples RSS and keeps the budget honest ({@code MemoryGuard}); what each model is
 * measured to cost ({@code ModelMemory}). Uses core, onnx and the config room.
 */
package dev.modelkeeper.server.memory;
