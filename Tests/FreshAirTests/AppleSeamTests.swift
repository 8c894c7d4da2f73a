import Foundation
import Testing

/// What can be made certain about the Apple-only code without an Apple compiler: read from
/// the sources as they are.
@Suite("Apple-only code, checked by reading it")
struct AppleSeamTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// Every Swift file under `folders`, its code lines only (comments are not calls).
    static func code(in folders: [String]) throws -> [(file: String, line: Int, text: String)] {
        var lines: [(String, Int, String)] = []
        for folder in folders {
            let url = root.appendingPathComponent(folder)
            guard let walk = FileManager.default.enumerator(at: url, includingPropertiesForKeys: nil) else { continue }
            for case let file as URL in walk where file.pathExtension == "swift" && !file.path.contains("/.build/") {
                let text = try String(contentsOf: file, encoding: .utf8)
                for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
                where !line.trimmingCharacters(in: .whitespaces).hasPrefix("//") {
                    lines.append(
                        (file.path.replacingOccurrences(of: root.path + "/", with: ""), number + 1, String(line))
                    )
                }
            }
        }
        return lines
    }

    @Test(
        "No UIScreen anywhere (unavailable on visionOS, main deprecated in the 26 SDKs), and no other API the 26 SDKs deprecate or visionOS lacks"
    )
    func noUnavailableAPI() throws {
        // UIScreen is unavailable on visionOS whatever #if guards it; none at all is the proof
        // that none is reachable there. The others: deprecated or unavailable per Apple's pages.
        let banned = ["UIScreen", "UIApplication.shared.windows", "keyWindow", "UIDevice.current.orientation"]
        let found = try Self.code(in: ["Sources", "Examples/AppClient/Sources"]).filter { line in
            banned.contains { line.text.contains($0) }
        }
        #expect(found.isEmpty, "\(found.map { "\($0.file):\($0.line): \($0.text)" })")
    }
}
