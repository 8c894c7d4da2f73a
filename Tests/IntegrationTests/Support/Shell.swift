import Foundation

/// Runs a shell command (real tar, gzip, zip, python3) in `folder`, failing the test setup
/// when it fails.
@discardableResult
func shell(_ command: String, in folder: URL) async throws -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/bin/sh")
    process.arguments = ["-c", command]
    process.currentDirectoryURL = folder
    let output = Pipe.unshared()
    process.standardOutput = output
    process.standardError = output
    process.standardInput = FileHandle.nullDevice
    try process.run()
    let data = try await waitOffThePool(process, reading: output).0
    let text = String(decoding: data, as: UTF8.self)
    guard process.terminationStatus == 0 else { throw TestSetupError("`\(command)` failed: \(text)") }
    return text
}

/// Waits for `process` and reads its pipes to the end on threads of their own: blocking
/// waits on the few cooperative threads would stall every other test's tasks.
func waitOffThePool(_ process: Process, reading first: Pipe, _ second: Pipe? = nil) async throws -> (Data, Data) {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread {
            // Both pipes are drained at once, so neither fills up while the other is read.
            let secondData = DataBox()
            let group = DispatchGroup()
            if let second {
                group.enter()
                Thread.detachNewThread {
                    secondData.data = second.fileHandleForReading.readDataToEndOfFile()
                    group.leave()
                }
            }
            let firstData = first.fileHandleForReading.readDataToEndOfFile()
            group.wait()  // after this, secondData is written and no longer shared
            process.waitUntilExit()
            continuation.resume(returning: (firstData, secondData.data))
        }
    }
}

/// Polls `condition` every 20 ms on a thread of its own until it holds or `deadline` passes,
/// then runs `action` there and returns. Not on the test's task: a poll that suspends can wake
/// late while the few cooperative threads are busy (a download could end first), and one that
/// sleeps on a cooperative thread holds it from every other test meanwhile.
func pollOffThePool(
    until deadline: Date,
    _ condition: @escaping @Sendable () -> Bool,
    then action: @escaping @Sendable () -> Void = {}
) async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        Thread.detachNewThread {
            while !condition(), Date() < deadline { usleep(20_000) }
            action()
            continuation.resume()
        }
    }
}

/// Bytes one thread reads from a pipe and another takes once the first has finished.
private final class DataBox: @unchecked Sendable {
    var data = Data()
}

/// Writes a small tree of content used by the archive tests.
func writeSampleContent(in folder: URL) throws {
    let manager = FileManager.default
    try manager.createDirectory(at: folder.appendingPathComponent("art/cats"), withIntermediateDirectories: true)
    try Data("meow\n".utf8).write(to: folder.appendingPathComponent("art/cats/cat1.txt"))
    try Data((0..<70_000).map { UInt8($0 % 253) }).write(to: folder.appendingPathComponent("art/big.bin"))
    try Data("#!/bin/sh\necho hi\n".utf8).write(to: folder.appendingPathComponent("run.sh"))
    try manager.setAttributes([.posixPermissions: 0o755], ofItemAtPath: folder.appendingPathComponent("run.sh").path)
    try manager.createSymbolicLink(
        atPath: folder.appendingPathComponent("art/latest.txt").path,
        withDestinationPath: "cats/cat1.txt"
    )
}

extension Pipe {
    /// A pipe whose ends no other child process inherits. swift-corelibs-foundation leaves a
    /// pipe's descriptors open in every process started meanwhile: an nginx another test
    /// started held a breeze's standard output open, so reading it to the end never ended.
    /// The process given an end still gets it (the copy made for it is not close-on-exec).
    static func unshared() -> Pipe {
        let pipe = Pipe()
        for descriptor in [pipe.fileHandleForReading.fileDescriptor, pipe.fileHandleForWriting.fileDescriptor] {
            _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
        }
        return pipe
    }
}

extension Process {
    /// Stops a server this test started, with SIGKILL.
    ///
    /// Not `terminate()`: a child started from one of this process's threads that block
    /// signals (NIO's, Dispatch's) keeps their mask, Foundation does not reset it, and its
    /// SIGTERM stays pending for ever. `python3 -m http.server` and the tests' socket servers
    /// outlived every run of the suite, five of them a run, until they were killed this way.
    /// Foundation reaps the process.
    func stopNow() {
        guard isRunning else { return }
        kill(processIdentifier, SIGKILL)
    }

    /// Starts a server that prints the port it listens on as its first line (`scripts/fault-proxy`,
    /// a test's own Python server): the process, running, and that port.
    static func portPrintingServer(_ executable: String, _ arguments: [String], name: String) throws -> (Process, Int) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let output = Pipe.unshared()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        var line = Data()
        while let byte = try output.fileHandleForReading.read(upToCount: 1), let first = byte.first,
            first != UInt8(ascii: "\n")
        {
            line.append(first)
        }
        guard let port = Int(String(decoding: line, as: UTF8.self)) else {
            process.stopNow()
            throw TestSetupError("\(name) did not start")
        }
        return (process, port)
    }
}
