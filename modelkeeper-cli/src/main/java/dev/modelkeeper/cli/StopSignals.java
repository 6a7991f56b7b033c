package dev.modelkeeper.cli;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;

/**
 * Turns SIGTERM and SIGINT into a call of one action instead of the JVM's shutdown, so that a
 * graceful stop runs while the whole process still works. (Shutdown hooks run concurrently, and
 * ONNX Runtime closes its environment in one of its own: requests still draining would then fail to
 * load or run models.) Uses the JDK's {@code sun.misc.Signal} (module jdk.unsupported), looked up
 * reflectively; where it is missing, nothing is installed and the shutdown hook remains the only
 * path. Stateless and thread-safe.
 */
final class StopSignals {

  private StopSignals() {}

  /**
   * Runs {@code onStop} (on a JVM signal thread, so it must return quickly) on SIGTERM or SIGINT.
   *
   * @return false when the signals could not be taken over
   */
  static boolean install(Runnable onStop) {
    try {
      Class<?> signal = Class.forName("sun.misc.Signal");
      Class<?> handler = Class.forName("sun.misc.SignalHandler");
      InvocationHandler call =
          (Object proxy, Method method, Object[] args) -> {
            if (method.getName().equals("handle")) {
              onStop.run();
              return null;
            }
            if (method.getName().equals("toString")) {
              return "modelkeeper stop signal handler";
            }
            if (method.getName().equals("hashCode")) {
              return System.identityHashCode(proxy);
            }
            if (method.getName().equals("equals")) {
              return proxy == args[0];
            }
            return null;
          };
      Object h =
          Proxy.newProxyInstance(
              StopSignals.class.getClassLoader(), new Class<?>[] {handler}, call);
      Method handle = signal.getMethod("handle", signal, handler);
      for (String name : new String[] {"TERM", "INT"}) {
        handle.invoke(null, signal.getConstructor(String.class).newInstance(name), h);
      }
      return true;
    } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
      return false;
    }
  }
}
