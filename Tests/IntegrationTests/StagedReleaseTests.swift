import BreezeKit
import Foundation
import FreshAir
import Testing

@Suite("Staged releases as conditions devices already evaluate")
struct StagedReleaseTests {
    static func entry(_ path: String, _ sha: String, condition: String? = nil) -> JSONValue {
        var pairs: [(key: String, value: JSONValue)] = [("filename", .string(path)), ("sha", .string(sha))]
        if let condition { pairs.append(("condition", .string(condition))) }
        return .object(pairs)
    }

    /// The paths a device with `environment` selects from `entries`, with their digests.
    static func selected(_ entries: [JSONValue], _ environment: ConditionEnvironment) throws -> [String: String] {
        let manifest = try Manifest(data: Data(JSONValue.array(entries).serializedBytes(indent: 0)), source: "m")
        var result: [String: String] = [:]
        for entry in manifest.entries where entry.condition.evaluate(in: environment) {
            #expect(result[entry.path.string] == nil, "\(entry.path.string) selected twice")
            result[entry.path.string] = entry.hash?.hex
        }
        return result
    }

    @Test("Shared files once; changed, added and removed ones behind the gate and its negation; own conditions kept")
    func merge() throws {
        let sha = { (n: Int) in String(repeating: String(n), count: 64) }
        let previous = [
            Self.entry("same.txt", sha(1)),
            Self.entry("changed.txt", sha(2)),
            Self.entry("gone.txt", sha(3)),
            Self.entry("hero@2x.png", sha(4), condition: "displayScale >= 2"),
        ]
        let next = [
            Self.entry("same.txt", sha(1)),
            Self.entry("changed.txt", sha(5)),
            Self.entry("new.txt", sha(6)),
            Self.entry("hero@2x.png", sha(7), condition: "displayScale >= 2"),
        ]
        let gate = try StagedRelease.Gate(percent: 10, channel: "beta")
        let merged = StagedRelease.entries(previous: previous, next: next, gate: gate)
        #expect(merged.count == 1 + 2 + 1 + 2 + 1)
        let conditions = merged.compactMap { $0["condition"]?.string }
        #expect(conditions.contains("(displayScale >= 2) && !(rolloutBucket < 10 && channel == 'beta')"))

        func device(channel: String?, bucket: Int?) -> ConditionEnvironment {
            var environment = ConditionEnvironment()
            environment["displayScale"] = .number("2")
            if let channel { environment["channel"] = .string(channel) }
            if let bucket { environment[RolloutBucket.key] = .number(String(bucket)) }
            return environment
        }
        let newRelease = ["same.txt": sha(1), "changed.txt": sha(5), "new.txt": sha(6), "hero@2x.png": sha(7)]
        let oldRelease = ["same.txt": sha(1), "changed.txt": sha(2), "gone.txt": sha(3), "hero@2x.png": sha(4)]
        #expect(try Self.selected(merged, device(channel: "beta", bucket: 3)) == newRelease)
        #expect(try Self.selected(merged, device(channel: "beta", bucket: 10)) == oldRelease)
        #expect(try Self.selected(merged, device(channel: "stable", bucket: 3)) == oldRelease)
        // An app too old to know channels or buckets keeps what it has.
        #expect(try Self.selected(merged, device(channel: nil, bucket: nil)) == oldRelease)
    }

    @Test("A gate is 1-99% and a plain channel name, or it says what to do instead")
    func gateWords() {
        #expect(throws: PublishError.self) { try StagedRelease.Gate(percent: 100, channel: nil) }
        #expect(throws: PublishError.self) { try StagedRelease.Gate(percent: 0, channel: nil) }
        #expect(throws: PublishError.self) { try StagedRelease.Gate(percent: nil, channel: "be'ta") }
        #expect(throws: PublishError.self) { try StagedRelease.Gate(percent: nil, channel: nil) }
        #expect((try? StagedRelease.Gate(percent: nil, channel: "beta"))?.condition == "channel == 'beta'")
    }
}
