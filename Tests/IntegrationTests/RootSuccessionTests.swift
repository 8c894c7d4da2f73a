import BreezeKit
import Foundation
import FreshAir
import Testing

/// The two rules a release's root must pass before it replaces the live one, as tables: no I/O.
@Suite("What may replace the live root: sequences only go up; removals beyond the guard need --allow-removals")
struct RootSuccessionTests {
    static func fields(_ sequence: Int?) -> ReleaseFields {
        var fields = ReleaseFields()
        fields.sequence = sequence
        return fields
    }

    @Test(
        "Each row: live and next sequence and bytes, and the verdict",
        arguments: [
            (nil as Int?, 1 as Int?, false, RootSuccession.first),
            (3, 3, true, .same),
            (3, 4, false, .newer),
            (3, 2, false, .older(live: 3, next: 2)),
            (3, 3, false, .sameSequence(3)),
            (nil, nil, false, .first),
            (3, nil, false, .newer),
        ]
    )
    func succession(live: Int?, next: Int?, sameBytes: Bool, verdict: RootSuccession) {
        let nextData = Data("next".utf8)
        let liveData: Data? = live == nil && verdict == .first ? nil : (sameBytes ? nextData : Data("live".utf8))
        let judged = RootSuccession(
            live: liveData,
            liveRelease: Self.fields(live),
            next: nextData,
            nextRelease: Self.fields(next)
        )
        #expect(judged == verdict)
    }

    @Test("Removals: every file, more than half, more than 256 MiB need --allow-removals; a few do not")
    func removals() {
        let live: [String: Int64] = ["a": 10, "b": 10, "c": 10, "d": 10]
        let check = RemovalCheck()
        let none = RemovalCheck.Removed(live: live, next: live)
        #expect(none.paths.isEmpty && check.problem(none) == nil)
        let one = RemovalCheck.Removed(live: live, next: ["a": 10, "b": 10, "c": 10])
        #expect(one.paths == ["d"] && one.bytes == 10 && check.problem(one) == nil)
        let half = RemovalCheck.Removed(live: live, next: ["a": 10, "b": 10])
        #expect(check.problem(half) == nil, "half is not more than half")
        let most = RemovalCheck.Removed(live: live, next: ["a": 10])
        #expect(check.problem(most)?.contains("3 of the 4 files") == true)
        let every = RemovalCheck.Removed(live: live, next: ["e": 1])
        #expect(check.problem(every)?.contains("every file devices have (4)") == true)
        let large = RemovalCheck.Removed(live: ["big": 300 << 20, "x": 1, "y": 1], next: ["x": 1, "y": 1])
        #expect(check.problem(large)?.contains("of content (more than") == true, "\(check.problem(large) ?? "allowed")")
        #expect(RemovalCheck(allowsAny: true).problem(every) == nil)
        // Sizes from a hostile store that add up past Int64.max: counted, not a trap.
        let hostile = RemovalCheck.Removed(live: ["x": .max, "y": .max, "z": 1, "w": 1], next: ["z": 1, "w": 1])
        #expect(hostile.bytes == .max && check.problem(hostile)?.contains("of content (more than") == true)
    }

    @Test("What a root lists: a manifest's entries once per path (a staged root lists some twice), an index's bundles")
    func listings() throws {
        let manifest = Data(
            #"{"format": 2, "files": [{"filename": "a.txt", "size": 3, "condition": "channel == 'beta'"}, {"filename": "a.txt", "size": 5, "condition": "!(channel == 'beta')"}, {"filename": "b.txt", "size": 1}]}"#
                .utf8
        )
        #expect(RootDocument(path: "manifest.json", data: manifest).listing == ["a.txt": 5, "b.txt": 1])
        let index = Data(#"{"bundles": {"art": {"version": 2}, "sound": {"version": 7}}}"#.utf8)
        #expect(Set(RootDocument(path: "index.json", data: index).listing.keys) == ["art", "sound"])
        #expect(RootDocument(path: "content.tgz.sig", data: Data("{}".utf8)).listing.isEmpty)
    }
}

/// When a staged release may replace the one running: the pure rule behind `--replace-rollout`.
@Suite("A staged release replaces a running one for another audience only with --replace-rollout")
struct RolloutReplacementTests {
    /// A root recording a staged release for `percent` and `channel`, or none.
    static func root(percent: Int?, channel: String?) -> JSONValue {
        var record: [(key: String, value: JSONValue)] = []
        if let percent { record.append(("percent", JSONValue(percent))) }
        if let channel { record.append(("channel", .string(channel))) }
        record.append(("previous", .array([])))
        var members: [(key: String, value: JSONValue)] = [("format", JSONValue(2)), ("files", .array([]))]
        if percent != nil || channel != nil { members.append(("staged", .object(record))) }
        return .object(members)
    }

    @Test(
        "Each row: the running rollout, the new one, --replace-rollout, and whether it is refused",
        arguments: [
            (nil as Int?, nil as String?, 10 as Int?, nil as String?, false, false),  // nothing running
            (10, nil, 50, nil, false, false),  // widened in place
            (10, nil, 5, nil, false, false),  // narrowed in place
            (10, nil, nil, "beta", false, true),  // another audience
            (10, nil, nil, "beta", true, false),  // ... allowed
            (nil, "beta", 20, "beta", false, false),  // the same channel, a share of it
            (nil, "beta", nil, "gamma", false, true),
            (30, "beta", 30, nil, false, true),  // every channel instead of one
        ]
    )
    func replacement(
        runningPercent: Int?,
        runningChannel: String?,
        percent: Int?,
        channel: String?,
        allowed: Bool,
        refused: Bool
    ) throws {
        let current = Self.root(percent: runningPercent, channel: runningChannel)
        let gate = try StagedRelease.Gate(percent: percent, channel: channel)
        var threw = false
        do { try StagedRelease.refuseReplacing(current, with: gate, allowed: allowed) } catch {
            threw = true
            #expect(error.kind == .configuration && error.description.contains("--replace-rollout"))
        }
        #expect(threw == refused)
    }
}
