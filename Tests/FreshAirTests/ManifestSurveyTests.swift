import Foundation
import TestSupport
import Testing

@testable import FreshAir

@Suite("A manifest's keys counted a megabyte at a time, each let go once passed")
struct ManifestSurveyTests {
    @Test(
        "Keys at and across the windows' edges: the counts of one search over the whole, and every byte let go in order"
    )
    func acrossWindows() {
        let window = 1 << 20
        let key = Array(#""filename""#.utf8)
        var generator = SeededGenerator()
        for round in 0..<20 {
            var bytes = [UInt8](
                repeating: UInt8(ascii: "x"),
                count: 3 * window + Int.random(in: 0..<999, using: &generator)
            )
            // Keys that end just before an edge, start on it, straddle it; then random ones.
            var starts = [window - 20, window, 2 * window - 3, 3 * window - key.count]
            starts += (0..<Int.random(in: 0..<40, using: &generator)).map { _ in
                Int.random(in: 0..<(bytes.count - key.count), using: &generator)
            }
            for start in starts { bytes.replaceSubrange(start..<start + key.count, with: key) }
            let signatures = Array(ManifestSignature.member.utf8)
            if round.isMultiple(of: 2) {
                let at = 2 * window - Int.random(in: 1..<signatures.count, using: &generator)
                bytes.replaceSubrange(at..<at + signatures.count, with: signatures)
            }
            let data = Data(bytes)
            let whole = bytes.withUnsafeBytes { ByteSearch.count(of: key, in: $0) }
            let named = bytes.withUnsafeBytes { ByteSearch.firstOffset(of: signatures, in: $0) } != nil
            var released: [Int] = []
            let survey = Manifest.survey(data, maxEntries: .max, letGo: { released.append($0) })
            #expect(survey.entries == whole && survey.namesSignatures == named, "round \(round), \(generator)")
            #expect(released == released.sorted() && released.last == bytes.count, "\(generator)")
            #expect(Manifest.survey(data, maxEntries: 3, letGo: nil).entries == min(3, whole), "\(generator)")
        }
    }
}
