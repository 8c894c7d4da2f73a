import Foundation

/// A fresh folder under the system's temporary directory, removed when the test is done.
final class TemporaryFolder: Sendable {
    let url: URL

    init(_ label: String = "test") throws {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("freshair-\(label)-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    /// A new folder at `url` (on a file system of a test's own), removed all the same.
    init(existing url: URL) throws {
        self.url = url
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    func path(_ relative: String) -> URL { url.appendingPathComponent(relative) }

    deinit { try? FileManager.default.removeItem(at: url) }
}

extension URL {
    /// The file's text, or `nil` when it cannot be read.
    var text: String? { (try? Data(contentsOf: self)).map { String(decoding: $0, as: UTF8.self) } }
}

/// A loopback port nothing listens on right now (another test's server may take it later: to
/// be refused for a whole test, hold a ``LoopbackSocket`` instead).
func freeLoopbackPort() throws -> Int {
    let socket = try LoopbackSocket(listening: false)
    defer { socket.close() }
    return socket.port
}

/// A TCP socket bound to a free loopback port, held until ``close()``: while it is held, no
/// other server can take the port.
///
/// - Not listening, every connection to it is refused: an "offline" server.
/// - Listening, the kernel completes connections and nobody ever reads or answers: a server
///   that has hung.
final class LoopbackSocket: @unchecked Sendable {
    let port: Int
    private let descriptor: Int32

    init(listening: Bool) throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.descriptor = descriptor
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { generic in
                bind(descriptor, generic, length) == 0 && getsockname(descriptor, generic, &length) == 0
            }
        }
        guard descriptor >= 0, bound, !listening || listen(descriptor, 16) == 0 else {
            _ = closeDescriptor(descriptor)
            throw TestSetupError("could not bind a loopback port")
        }
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    /// `http://127.0.0.1:<port>/<path>`.
    func url(_ path: String) -> URL { URL(string: "http://127.0.0.1:\(port)/\(path)")! }

    func close() { _ = closeDescriptor(descriptor) }
}

/// libc's `close`, which ``LoopbackSocket/close()`` shadows.
private func closeDescriptor(_ descriptor: Int32) -> Int32 { close(descriptor) }

/// Whether something accepts TCP connections on 127.0.0.1:`port`.
func isListening(port: Int) -> Bool {
    let socketDescriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(socketDescriptor) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = UInt16(port).bigEndian
    return withUnsafePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            connect(socketDescriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
        }
    }
}

struct TestSetupError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
