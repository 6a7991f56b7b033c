/**
 * Scale-out: three replicas behind HAProxy, model-affine (consistent hashing with bounded load) or
 * round-robin, started as child processes for the scale-out tests and benchmark.
 */
package dev.modelkeeper.scaleout;
