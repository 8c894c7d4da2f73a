import Foundation
import Testing

@testable import FreshAir

@Suite("Freshness: identity, sequence and expiry of a root document")
struct FreshnessCheckTests {
    func check(pinned: Bool, minimum: Int? = nil) -> FreshnessCheck {
        var configuration = SyncConfiguration()
        if pinned {
            configuration.trustedKeys = [try! TrustedKey(base64: Data(repeating: 1, count: 32).base64EncodedString())]
        }
        configuration.minimumSequence = minimum
        return FreshnessCheck(
            source: "http://h/A.freshair/manifest.json",
            configuration: configuration,
            defaultIdentity: "A.freshair"
        )
    }

    let later = Date().addingTimeInterval(86_400)

    @Test("With keys pinned, identity, sequence and expires are required")
    func requiredFields() {
        let pinned = check(pinned: true)
        for (offered, missing) in [
            (FreshnessCheck.Offered(identity: nil, sequence: 1, expires: later, digest: "d"), "identity"),
            (FreshnessCheck.Offered(identity: "A.freshair", sequence: nil, expires: later, digest: "d"), "sequence"),
            (FreshnessCheck.Offered(identity: "A.freshair", sequence: 1, expires: nil, digest: "d"), "expires"),
        ] {
            #expect(throws: ManifestError(source: pinned.source, problem: .missingSignedField(missing))) {
                try pinned.check(offered, mark: nil, liveSequence: nil)
            }
        }
        // Unpinned, an old-style manifest without them still loads.
        #expect(throws: Never.self) { try check(pinned: false).check(.init(digest: "d"), mark: nil, liveSequence: nil) }
    }

    @Test("The floor is the highest of the mark, the live version and the app's minimum; equal needs the same bytes")
    func floor() throws {
        let pinned = check(pinned: true, minimum: 3)
        func offered(_ sequence: Int, _ digest: String = "d") -> FreshnessCheck.Offered {
            .init(identity: "A.freshair", sequence: sequence, expires: later, digest: digest)
        }
        #expect(throws: ManifestError.self) { try pinned.check(offered(2), mark: nil, liveSequence: nil) }
        #expect(throws: ManifestError.self) {
            try pinned.check(offered(6), mark: HighWaterMark(sequence: 7, digest: "x"), liveSequence: 5)
        }
        #expect(throws: ManifestError(source: pinned.source, problem: .replayedSequence(7))) {
            try pinned.check(offered(7, "other"), mark: HighWaterMark(sequence: 7, digest: "x"), liveSequence: 5)
        }
        try pinned.check(offered(7, "x"), mark: HighWaterMark(sequence: 7, digest: "x"), liveSequence: 5)
        try pinned.check(offered(8), mark: HighWaterMark(sequence: 7, digest: "x"), liveSequence: 5)
        #expect(
            throws: ManifestError(
                source: pinned.source,
                problem: .wrongIdentity(expected: "A.freshair", found: "B.freshair")
            )
        ) {
            try pinned.check(
                .init(identity: "B.freshair", sequence: 9, expires: later, digest: "d"),
                mark: nil,
                liveSequence: nil
            )
        }
        #expect(throws: ManifestError.self) {
            try pinned.check(
                .init(identity: "A.freshair", sequence: 9, expires: Date().addingTimeInterval(-3_600), digest: "d"),
                mark: nil,
                liveSequence: nil
            )
        }
    }
}
