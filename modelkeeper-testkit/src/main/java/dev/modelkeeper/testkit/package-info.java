/**
 * The one test harness of the project, used by every module's tests: the packaged server as a child
 * process ({@code ServerProcess}), the HTTP test client ({@code Http}), the fake models of the
 * server's tests ({@code FakeModels}, {@code FakeModel}, {@code RowModel}, paused with the core's
 * {@code Gate}) and the demo repository written once per run ({@code DemoRepo}).
 */
package dev.modelkeeper.testkit;
