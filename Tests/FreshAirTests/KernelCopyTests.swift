import Foundation
import Testing

@testable import FreshAir

@Suite("Kept bytes copied by the kernel (copy_file_range) into a file being assembled")
struct KernelCopyTests {
    @Test(
        "Ranges land exactly where asked, beside bytes written the ordinary way; a source that ends first is an error"
    )
    func copiesRanges() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("kernel-copy-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let (source, target) = (folder.appendingPathComponent("old").path, folder.appendingPathComponent("new").path)
        let bytes = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 9) }
        try Data(bytes).write(to: URL(fileURLWithPath: source))
        let input = try InputFile(path: source)
        let output = try OutputFile(path: target, append: false)
        try output.setLength(200_000)
        var expected = [UInt8](repeating: 0, count: 200_000)
        var copiedByKernel = 0
        for (from, to, length) in [(123_457, 0, 70_000), (0, 70_000, 4096), (250_000, 150_000, 50_000)] {
            if try output.copy(from: input, at: Int64(from), length: length, to: Int64(to)) {
                copiedByKernel += 1
            } else {
                try bytes[from..<(from + length)].withUnsafeBytes { try output.write($0, at: Int64(to)) }
            }
            expected.replaceSubrange(to..<(to + length), with: bytes[from..<(from + length)])
        }
        output.close()
        #expect(try [UInt8](Data(contentsOf: URL(fileURLWithPath: target))) == expected)
        #if os(Linux)
        #expect(copiedByKernel == 3, "copy_file_range works on this machine's file systems (ext4, tmpfs, overlayfs)")
        let again = try OutputFile(updating: target)
        defer { again.close() }
        #expect(throws: FreshAirError.self) {
            _ = try again.copy(from: input, at: 299_000, length: 4096, to: 0)
        }
        #endif
    }
}
