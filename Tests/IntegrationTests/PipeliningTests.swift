import Foundation
import FreshAir
import FreshAirAsyncHTTPClient
import Synchronization
import TestSupport
import Testing

/// `PipeliningTransport` against nginx: small answers asked for several at a time on one
/// connection, large ones alone, and what a connection closed early left unanswered sent again.
/// The contract every transport keeps (conditional GET, ranges, redirects, timeouts, streaming)
/// is `TransportTests`'s, which runs it too.
@Suite("The pipelining client against nginx")
struct PipeliningTests {
    /// nginx serving `count` files of 1,000 random bytes (`f000.bin`…) and a 4 MB `large.bin`.
    final class Served {
        let nginx: Nginx
        let folder: TemporaryFolder
        let files: [Data]

        init(count: Int) throws {
            folder = try TemporaryFolder("pipelining")
            files = (0..<count).map { _ in SeededBytes.random(1000) }
            for (index, data) in files.enumerated() { try data.write(to: folder.path(Self.name(index))) }
            try SeededBytes.random(4 << 20).write(to: folder.path("large.bin"))
            nginx = try Nginx(serving: folder.url)
        }

        static func name(_ index: Int) -> String { String(format: "f%03d.bin", index) }
        deinit { nginx.stop() }
    }

    /// Fetches `indices` at once, each announced as the small file it is; answers the bodies by index.
    static func fetch(
        _ indices: Range<Int>,
        from base: URL,
        through transport: PipeliningTransport
    ) async throws -> [Int: Data] {
        try await withThrowingTaskGroup(of: (Int, Data).self) { group in
            for index in indices {
                group.addTask {
                    let request = HTTPGetRequest(
                        url: base.appendingPathComponent(Served.name(index)),
                        expectedBodySize: 1000
                    )
                    return try await transport.get(request) { head, body in
                        guard head.status == 200 else { throw TestSetupError("status \(head.status) for \(index)") }
                        return (index, try await body.collect(upTo: 1 << 20))
                    }
                }
            }
            var bodies: [Int: Data] = [:]
            for try await (index, data) in group { bodies[index] = data }
            return bodies
        }
    }

    @Test(
        "Small files go out several to a connection before the first answer (depth 8), or one at a time (depth 1), and arrive whole",
        arguments: [8, 1]
    )
    func smallFilesPipelined(depth: Int) async throws {
        let served = try Served(count: 64)
        try await PipeliningTransport.withTransport(connectionsPerHost: 2, depth: depth) { transport in
            let bodies = try await Self.fetch(0..<64, from: served.nginx.url, through: transport)
            #expect(bodies.count == 64 && bodies.allSatisfy { served.files[$0.key] == $0.value })
        }
        let log = served.nginx.connections()
        #expect(log.count == 64)
        #expect(Set(log.map(\.connection)).count <= 2, "two connections at most")
        // nginx read requests it had not yet answered: they were sent ahead.
        let pipelined = log.filter(\.pipelined).count
        #expect(depth == 1 ? pipelined == 0 : pipelined >= 8, "\(pipelined) of 64 pipelined")
    }

    @Test(
        "Each request in line on a connection keeps its own timeout: one after a short one's answer is not cut off by it"
    )
    func headTimeoutFollowsTheLine() async throws {
        let served = try Served(count: 1)
        // One byte at nginx's `/dribble/` rate of 100 bytes a second: its head takes 2 s or so.
        try Data([1]).write(to: served.folder.path("tiny.bin"))
        try await PipeliningTransport.withTransport(connectionsPerHost: 1, depth: 8) { transport in
            let quick = HTTPGetRequest(
                url: served.nginx.url.appendingPathComponent(Served.name(0)),
                timeout: .milliseconds(500),
                expectedBodySize: 1000
            )
            _ = try await transport.get(quick) { _, body in try await body.collect(upTo: 1 << 20) }
            // On the same connection, long after the first request's 0.5 s.
            let slow = HTTPGetRequest(
                url: served.nginx.url.appendingPathComponent("dribble/tiny.bin"),
                timeout: .seconds(30),
                expectedBodySize: 1
            )
            let body = try await transport.get(slow) { _, body in try await body.collect(upTo: 1 << 20) }
            #expect(body == Data([1]))
        }
        #expect(Set(served.nginx.connections().map(\.connection)).count == 1, "both on one connection")
    }

    @Test("A large answer has nothing sent behind it: small files wait for it, then go out")
    func nothingBehindALargeAnswer() async throws {
        let served = try Served(count: 16)
        let base = served.nginx.url
        try await PipeliningTransport.withTransport(connectionsPerHost: 1, depth: 8) { transport in
            let started = AsyncStream<Void>.makeStream()
            async let large: Int = transport.get(HTTPGetRequest(url: base.appendingPathComponent("large.bin"))) {
                _,
                body in
                started.continuation.yield()
                var count = 0
                for try await chunk in body {
                    count += chunk.count
                    try await Task.sleep(for: .milliseconds(2))  // slower than loopback
                }
                return count
            }
            var iterator = started.stream.makeAsyncIterator()
            _ = await iterator.next()
            let bodies = try await Self.fetch(0..<16, from: base, through: transport)
            #expect(try await large == 4 << 20)
            #expect(bodies.count == 16 && bodies.allSatisfy { served.files[$0.key] == $0.value })
        }
        let log = served.nginx.connections()
        let largeEntry = try #require(log.first { $0.path == "/large.bin" })
        let next = log.first { $0.connection == largeEntry.connection && $0.request == largeEntry.request + 1 }
        // The one after it on its connection was sent once it had been answered.
        #expect(next?.pipelined == false, "\(String(describing: next))")
    }

    @Test("A server that closes each connection after 3 answers: what it left unanswered is sent again, and arrives")
    func unansweredRequestsResent() async throws {
        let served = try Served(count: 60)
        let base = served.nginx.url.appendingPathComponent("few-per-connection/")
        try await PipeliningTransport.withTransport(connectionsPerHost: 2, depth: 8) { transport in
            let bodies = try await Self.fetch(0..<60, from: base, through: transport)
            #expect(bodies.count == 60 && bodies.allSatisfy { served.files[$0.key] == $0.value })
        }
        let log = served.nginx.connections()
        #expect(log.count == 60, "each answered once")
        #expect(log.allSatisfy { $0.request <= 3 })
        #expect(Set(log.map(\.connection)).count >= 20)
    }

    @Test("A server that closes every connection without answering: the request fails after 4 sends, in words")
    func neverAnswered() async throws {
        let server = try HangUpServer()
        defer { server.stop() }
        _ = try await PipeliningTransport.withTransport(connectionsPerHost: 2, depth: 8) { transport in
            await #expect {
                try await transport.get(HTTPGetRequest(url: server.url("a.bin"), expectedBodySize: 10)) { _, _ in }
            } throws: { error in
                guard let failure = error as? TransportError else { return false }
                return failure.kind == .interrupted
                    && "\(failure)".contains("the server closed the connection before answering, 4 times")
                    && failure.url == server.url("a.bin")
            }
        }
        #expect(server.hungUpOn() == 4)
    }

    @Test("A server that closes every connection before reading it: the request fails after 4 sends, not 64")
    func closedBeforeReading() async throws {
        let server = try HangUpServer(readsTheRequest: false)
        defer { server.stop() }
        _ = try await PipeliningTransport.withTransport(connectionsPerHost: 2, depth: 8) { transport in
            await #expect {
                try await transport.get(HTTPGetRequest(url: server.url("a.bin"), expectedBodySize: 10)) { _, _ in }
            } throws: { error in
                "\(error)".contains("the server closed the connection before answering, 4 times")
            }
        }
        // A connection whose request went out after the server's close had arrived is the
        // server's refusal as much as one it closed with the request in hand. One this side
        // closed idle (on a loaded machine) is not, and may add one.
        #expect((4...5).contains(server.hungUpOn()))
    }

    @Test(
        "Twenty requests to a server that closes every connection at once: each fails in words, none waits for ever"
    )
    func manyClosedBeforeReading() async throws {
        let server = try HangUpServer(readsTheRequest: false)
        defer { server.stop() }
        let transport = PipeliningTransport(connectionsPerHost: 2, depth: 8)
        let outcomes = Outcomes()
        // Alone this takes 0.1 s. On the shared threads, at the start of a full run, its tasks'
        // turns came seconds apart and 30 s were not enough. (`Task {}` does not inherit a
        // preference, so `.backgroundThread` would not reach them.)
        let executor = DedicatedThreadExecutor(name: "many-closed")
        defer { executor.stop() }
        // Unstructured, so that a request left waiting cannot hold the test: the pool's shutdown
        // below fails whatever still waits.
        let requests = (0..<20).map { index in
            Task(executorPreference: executor) {
                do {
                    try await transport.get(HTTPGetRequest(url: server.url("\(index).bin"), expectedBodySize: 10)) {
                        _,
                        _ in
                    }
                    outcomes.list.withLock { $0.append("answered") }
                } catch {
                    outcomes.list.withLock { $0.append("\(error)") }
                }
            }
        }
        await pollOffThePool(until: Date() + 30, { outcomes.list.withLock { $0.count } == 20 })
        let settled = outcomes.list.withLock { $0 }
        await transport.shutdown()
        for request in requests { await request.value }
        // A connection closed before the pool registered it once stayed in the pool, holding
        // one of the origin's places with requests counted in flight on it for ever; two such
        // left every request waiting.
        #expect(settled.count == 20, "\(20 - settled.count) requests still waiting after 30 s")
        #expect(settled.allSatisfy { $0.contains("the server closed the connection before answering") }, "\(settled)")
    }

    @Test("An HTTP/1.0 server that closes after every answer (python3 -m http.server): every file arrives")
    func serverClosingAfterEveryAnswer() async throws {
        let served = try Served(count: 40)
        let port = try freeLoopbackPort()
        let server = Process()
        server.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        server.arguments = [
            "-m", "http.server", "--bind", "127.0.0.1", "--directory", served.folder.url.path, "\(port)",
        ]
        server.standardOutput = FileHandle.nullDevice
        server.standardError = FileHandle.nullDevice
        try server.run()
        defer { server.stopNow() }
        let deadline = ContinuousClock.now + .seconds(10)
        while !isListening(port: port), ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        let base = try #require(URL(string: "http://127.0.0.1:\(port)/"))
        try await PipeliningTransport.withTransport(connectionsPerHost: 2, depth: 8) { transport in
            let bodies = try await Self.fetch(0..<40, from: base, through: transport)
            #expect(bodies.count == 40 && bodies.allSatisfy { served.files[$0.key] == $0.value })
        }
    }

    @Test(
        "A task cancelled while it waits, for an answer or for its body, stops at once",
        .timeLimit(.minutes(1))
    )
    func cancelledWhileWaiting() async throws {
        let served = try Served(count: 1)
        try Data(repeating: 7, count: 30_000).write(to: served.folder.path("slow.bin"))
        let silent = try LoopbackSocket(listening: true)
        defer { silent.close() }
        // The idle and request timeouts are 10 minutes: only cancellation can end these in time.
        let transport = PipeliningTransport(idleTimeout: .seconds(600))
        // The body's case: cancelled once its head and first bytes are in, while it waits for more.
        let inBody = AsyncStream<Void>.makeStream()
        let reading = Task {
            let url = served.nginx.url.appendingPathComponent("dribble/slow.bin")
            try await transport.get(HTTPGetRequest(url: url, timeout: .seconds(600))) { _, body in
                for try await _ in body { inBody.continuation.yield() }
            }
        }
        var arrived = inBody.stream.makeAsyncIterator()
        _ = await arrived.next()
        try await Task.sleep(for: .milliseconds(200))
        await Self.expectCancelled(reading, "waiting for the body")
        // The head's case: a server that accepts and never answers.
        let waiting = Task {
            try await transport.get(HTTPGetRequest(url: silent.url("a.bin"), timeout: .seconds(600))) { _, _ in }
        }
        try await Task.sleep(for: .milliseconds(300))
        await Self.expectCancelled(waiting, "waiting for the head")
        await transport.shutdown()
    }

    /// `task`'s outcome, or `nil` when it has none within `limit`: a task that never ends fails
    /// the test instead of hanging the run.
    static func outcome<T: Sendable>(of task: Task<T, any Error>, within limit: Duration) async -> Result<T, any Error>?
    {
        await withCheckedContinuation { continuation in
            let first = FirstAnswer(continuation)
            Task { first.resume(returning: await task.result) }
            Task {
                try? await Task.sleep(for: limit)
                first.resume(returning: nil)
            }
        }
    }

    /// Cancels `task` and expects it to end in cancellation within 20 s (`what`: where it waited).
    static func expectCancelled<T: Sendable>(
        _ task: Task<T, any Error>,
        _ what: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async {
        task.cancel()
        let ended = await outcome(of: task, within: .seconds(20))
        let cancelled: Bool =
            if case .failure(let error) = ended { error is CancellationError } else { false }
        #expect(cancelled, "\(what): \(String(describing: ended))", sourceLocation: sourceLocation)
    }

    @Test("An answer abandoned midway closes its connection; those sent behind it go again and arrive")
    func abandonedAnswerClosesTheConnection() async throws {
        let served = try Served(count: 8)
        // 30 KB at 100 bytes a second (nginx's `/dribble/`): still arriving when its reader
        // gives up, with the small files' requests sent behind it on the one connection.
        try Data(repeating: 7, count: 30_000).write(to: served.folder.path("slow.bin"))
        struct GaveUp: Error {}
        try await PipeliningTransport.withTransport(connectionsPerHost: 1, depth: 8) { transport in
            let slow = HTTPGetRequest(
                url: served.nginx.url.appendingPathComponent("dribble/slow.bin"),
                expectedBodySize: 30_000
            )
            let abandoned = Task {
                try await transport.get(slow) { _, body in
                    for try await _ in body {
                        try await Task.sleep(for: .milliseconds(300))
                        throw GaveUp()
                    }
                }
            }
            try await Task.sleep(for: .milliseconds(50))
            let bodies = try await Self.fetch(0..<8, from: served.nginx.url, through: transport)
            #expect(bodies.count == 8 && bodies.allSatisfy { served.files[$0.key] == $0.value })
            await #expect(throws: GaveUp.self) { try await abandoned.value }
        }
        let log = served.nginx.connections()
        #expect(Set(log.map(\.connection)).count == 2, "the abandoned answer's connection closed, another opened")
        #expect(log.filter { $0.path.hasPrefix("/f") }.count == 8)
    }

    @Test("A connection opened ahead carries the first request: one connection, however often it was asked for")
    func connectedAhead() async throws {
        let server = try CountingServer()
        defer { server.stop() }
        try await PipeliningTransport.withTransport(connectionsPerHost: 4, depth: 8) { transport in
            transport.connectAhead(to: server.url("a"))
            transport.connectAhead(to: server.url("b"))
            // At once, while it may still be opening (adopted), then once it is idle (lent).
            for path in ["c", "d"] {
                let body = try await transport.get(HTTPGetRequest(url: server.url(path))) { head, body in
                    #expect(head.status == 200)
                    return try await body.collect(upTo: 1 << 10)
                }
                #expect(body == Data("ok".utf8))
            }
        }
        #expect(server.accepted() == 1, "\(server.accepted()) connections")
    }

    @Test("A connection opened ahead that is refused: the first request fails once, as it would have alone")
    func refusedAhead() async throws {
        let offline = try LoopbackSocket(listening: false)
        defer { offline.close() }
        let url = offline.url("x")
        let started = ContinuousClock.now
        // A refusal ends it, not the connect timeout: the timeout is far past what a loaded
        // test run takes (5.1 s once, with 96 tests at a time on 2 cores).
        try await PipeliningTransport.withTransport(connectionsPerHost: 4, depth: 8, connectTimeout: .seconds(120)) {
            transport in
            transport.connectAhead(to: url)
            await #expect(throws: TransportError.self) {
                try await transport.get(HTTPGetRequest(url: url)) { _, _ in }
            }
        }
        #expect(ContinuousClock.now - started < .seconds(60))
    }
}

/// An HTTP/1.1 server that keeps connections open and answers every request `ok`, counting the
/// connections it accepted.
private final class CountingServer: @unchecked Sendable {
    private let process: Process
    let port: Int
    private let home: TemporaryFolder

    init() throws {
        home = try TemporaryFolder("counting")
        (process, port) = try Process.portPrintingServer(
            "/usr/bin/python3",
            [
                "-c",
                """
                import socket, sys, threading
                server = socket.socket()
                server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                server.bind(("127.0.0.1", 0))
                server.listen(16)
                print(server.getsockname()[1], flush=True)
                count = 0
                def answer(connection):
                    pending = b""
                    while True:
                        data = connection.recv(65536)
                        if not data:
                            return
                        pending += data
                        while b"\\r\\n\\r\\n" in pending:
                            _, pending = pending.split(b"\\r\\n\\r\\n", 1)
                            connection.sendall(b"HTTP/1.1 200 OK\\r\\nContent-Length: 2\\r\\n\\r\\nok")
                while True:
                    connection, _ = server.accept()
                    count += 1
                    open(sys.argv[1], "w").write(str(count))
                    threading.Thread(target=answer, args=(connection,), daemon=True).start()
                """,
                home.path("count").path,
            ],
            name: "the counting server"
        )
    }

    func url(_ path: String) -> URL { URL(string: "http://127.0.0.1:\(port)/\(path)")! }
    func accepted() -> Int { Int(home.path("count").text ?? "") ?? 0 }
    func stop() { process.stopNow() }
}

/// A server that closes every connection unanswered, counting them: after taking its request,
/// or at once, before the request can arrive.
private final class HangUpServer: @unchecked Sendable {
    private let process: Process
    let port: Int
    private let home: TemporaryFolder

    init(readsTheRequest: Bool = true) throws {
        home = try TemporaryFolder("hang-up")
        (process, port) = try Process.portPrintingServer(
            "/usr/bin/python3",
            [
                "-c",
                """
                import socket, sys
                server = socket.socket()
                server.bind(("127.0.0.1", 0))
                server.listen(16)
                print(server.getsockname()[1], flush=True)
                reads = sys.argv[2] == "reads"
                count = 0
                while True:
                    connection, _ = server.accept()
                    if not reads or connection.recv(65536):
                        count += 1
                        open(sys.argv[1], "w").write(str(count))
                    connection.close()
                """,
                home.path("count").path,
                readsTheRequest ? "reads" : "closes at once",
            ],
            name: "the hang-up server"
        )
    }

    func url(_ path: String) -> URL { URL(string: "http://127.0.0.1:\(port)/\(path)")! }
    /// Connections that brought a request (or, closing at once, connections). One the client
    /// closed before writing its request (closed idle while its task waited for a thread on a
    /// loaded machine) brings nothing, and the client sends that request again without counting
    /// it against the server.
    func hungUpOn() -> Int { Int(home.path("count").text ?? "") ?? 0 }
    func stop() { process.stopNow() }
}

/// What each of several requests came to, as they end.
private final class Outcomes: Sendable {
    let list = Mutex<[String]>([])
}

/// A continuation resumed by whichever answer comes first; later ones are dropped.
private final class FirstAnswer<Value: Sendable>: Sendable {
    private let continuation: Mutex<CheckedContinuation<Value, Never>?>
    init(_ continuation: CheckedContinuation<Value, Never>) { self.continuation = Mutex(continuation) }
    func resume(returning value: Value) { continuation.withLock { $0.take() }?.resume(returning: value) }
}
