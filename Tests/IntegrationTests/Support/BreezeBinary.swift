import Foundation

/// The built `breeze` executable, for tests that run it as a user would (and kill it).
enum BreezeBinary {
    /// `BREEZE_BIN`, set by scripts/test, or the debug build beside these sources.
    static var path: String {
        get throws {
            if let path = ProcessInfo.processInfo.environment["BREEZE_BIN"],
                FileManager.default.isExecutableFile(atPath: path)
            {
                return path
            }
            let packageRoot = URL(fileURLWithPath: #filePath)
                .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent()
            let candidate = packageRoot.appendingPathComponent(".build/debug/breeze").path
            guard FileManager.default.isExecutableFile(atPath: candidate) else {
                throw TestSetupError(
                    "breeze is not built: run scripts/test (it builds breeze, then runs swift test)"
                )
            }
            return candidate
        }
    }

    struct Run {
        var status: Int32
        var output: String
        var error: String
    }

    /// Runs breeze to completion and captures its output.
    static func run(_ arguments: [String], environment: [String: String] = [:]) async throws -> Run {
        let process = try start(arguments, environment: environment)
        let (outputPipe, errorPipe) = (process.standardOutput as! Pipe, process.standardError as! Pipe)
        let (output, error) = try await waitOffThePool(process, reading: outputPipe, errorPipe)
        return Run(
            status: process.terminationStatus,
            output: String(decoding: output, as: UTF8.self),
            error: String(decoding: error, as: UTF8.self)
        )
    }

    /// Starts breeze with piped output and returns at once.
    static func start(
        _ arguments: [String],
        environment: [String: String] = [:],
        in folder: URL? = nil
    ) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try path)
        process.arguments = arguments
        if let folder { process.currentDirectoryURL = folder }
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        }
        process.standardOutput = Pipe.unshared()
        process.standardError = Pipe.unshared()
        try process.run()
        return process
    }
}
