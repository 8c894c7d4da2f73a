public import Testing

/// Runs each test it marks on a thread of its own at a low priority (``DedicatedThreadExecutor``,
/// nice 10): for tests that compute for long without awaiting (the linearity and chunk-search
/// tests, large records). On the global executor's two threads they held each one for seconds
/// while the tests waiting on servers queued behind them; at a low priority they take the CPU
/// the others leave.
///
/// A test measuring its own speed under it counts the CPU time of its thread, not the clock's.
/// Its child tasks run there too; unstructured tasks (`Task {}`), `Task.detached` and the
/// library's own threads do not.
public struct BackgroundThreadTrait: TestTrait, SuiteTrait, TestScoping {
    public var isRecursive: Bool { true }

    public func scopeProvider(for test: Test, testCase: Test.Case?) -> Self? {
        testCase == nil ? nil : self
    }

    public func provideScope(
        for test: Test,
        testCase: Test.Case?,
        performing function: @Sendable () async throws -> Void
    ) async throws {
        let executor = DedicatedThreadExecutor(name: test.name, niceness: 10)
        defer { executor.stop() }
        try await withTaskExecutorPreference(executor) { try await function() }
    }
}

extension Trait where Self == BackgroundThreadTrait {
    /// Runs each test on a thread of its own at a low priority: see ``BackgroundThreadTrait``.
    public static var backgroundThread: Self { BackgroundThreadTrait() }
}
