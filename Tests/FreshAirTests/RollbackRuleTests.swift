import Testing

@testable import FreshAir

/// The one rule every delivery mode applies after a rollback, as a table with no I/O: what a
/// server's answer means when this device rolled back from what the server offered.
@Suite("After a rollback: which answers keep the live version, in every mode")
struct RollbackRuleTests {
    typealias Rejected = BundleStore.RejectedContent
    static let withValidators = Rejected(source: "s", validators: HTTPValidators(etag: "\"r\""), rootDigest: "aa")
    static let noValidators = Rejected(source: "s", validators: HTTPValidators(), rootDigest: "aa")
    static let package = Rejected(source: "s", validators: HTTPValidators(lastModified: "Mon"), rootDigest: nil)

    @Test(
        "Keep or install",
        arguments: [
            // Nothing rolled back from: every answer is the server's to install.
            (nil, .notModified, false),
            (nil, .document(sha256: "aa"), false),
            (nil, .versionedURL, false),
            // Asked with the rejected content's validators: a 304 is that content, still.
            (withValidators, .notModified, true),
            (package, .notModified, true),
            // No validators were kept, so a 304 answered the live version's: nothing rejected.
            (noValidators, .notModified, false),
            // A server without validators sends the same root again: the same bytes are refused.
            (noValidators, .document(sha256: "aa"), true),
            (withValidators, .document(sha256: "bb"), false),
            (package, .document(sha256: "aa"), false),
            // A repository bundle's archive URL names one version.
            (package, .versionedURL, true),
        ] as [(Rejected?, Rejected.Answer, Bool)]
    )
    func keeps(rejected: Rejected?, answer: Rejected.Answer, keeps: Bool) {
        #expect(Rejected.keepsRollback(rejected, after: answer) == keeps)
    }

    @Test("Ask with what was rolled back from, else with the live version's validators")
    func validators() {
        let live = HTTPValidators(etag: "\"live\"")
        #expect(Rejected.validatorsToAsk(rejected: Self.withValidators, live: live) == HTTPValidators(etag: "\"r\""))
        #expect(Rejected.validatorsToAsk(rejected: Self.noValidators, live: live) == live)
        #expect(Rejected.validatorsToAsk(rejected: nil, live: live) == live)
        #expect(Rejected.validatorsToAsk(rejected: nil, live: nil) == nil)
    }
}
