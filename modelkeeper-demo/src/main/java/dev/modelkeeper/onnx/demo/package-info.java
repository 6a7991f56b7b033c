/**
 * The demo model repository and the project code that makes its models: a softmax-regression Iris
 * classifier trained on the bundled public-domain Iris data, multilayer perceptrons with seeded
 * random weights of any size, and a model with one input per datatype. Nothing is downloaded;
 * {@link dev.modelkeeper.onnx.demo.DemoRepository#materialize} writes the repository into a folder.
 */
package dev.modelkeeper.onnx.demo;
