import Foundation
import FreshAir
import Testing

@Suite("Manifests: every legacy form loads unchanged")
struct ManifestTests {
    let sha1 = "0beec7b5ea3f0fdbc95d0dd47f3c5bc275da8a33"
    let sha256 = "2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae"

    func load(_ json: String) throws -> Manifest {
        try Manifest(data: Data(json.utf8), source: "Test.freshair/manifest.json")
    }

    @Test func legacyArrayWithEveryFieldSpelling() throws {
        let manifest = try load(
            """
            [
              {"filename": "a.md", "sha": "\(sha1)"},
              {"filename": "b.md", "SHA": "\(sha256.uppercased())", "condition": "platform == 'iOS'"},
              {"filename": "c.md", "conditions": [{"key": "appVersion", "value": "1.0"}]},
              {"filename": "d.md"},
              {"filename": "Child.freshair/manifest.json", "sha": "\(sha256)"}
            ]
            """
        )
        #expect(manifest.form == .legacyArray)
        #expect(
            manifest.entries.map(\.path.string) == ["a.md", "b.md", "c.md", "d.md", "Child.freshair/manifest.json"]
        )
        #expect(manifest.entries[0].hash?.algorithm == .sha1)
        #expect(manifest.entries[1].hash?.algorithm == .sha256)
        #expect(manifest.entries[1].hash?.hex == sha256)
        #expect(manifest.entries[3].hash == nil)
        #expect(manifest.entries[4].isChildManifest)
        #expect(!manifest.entries[0].isChildManifest)
        // `comparison` defaults to gte.
        var environment = ConditionEnvironment()
        environment["appVersion"] = "1.0"
        #expect(manifest.entries[2].condition.evaluate(in: environment))
        environment["appVersion"] = "0.9"
        #expect(!manifest.entries[2].condition.evaluate(in: environment))
    }

    @Test func objectFormWithSizesAndSequence() throws {
        let manifest = try load(
            """
            {"format": 2, "sequence": 12, "expires": "2030-01-01T00:00:00Z",
             "files": [{"filename": "a.md", "sha": "\(sha256)", "size": 3}]}
            """
        )
        #expect(manifest.form == .object(format: 2))
        #expect(manifest.sequence == 12)
        #expect(manifest.expires != nil)
        #expect(manifest.entries.first?.size == 3)
    }

    @Test func malformedJSONNamesLineAndColumn() {
        let text = "[\n  {\"filename\": \"a.md\",\n   \"sha\": 12,, }\n]"
        #expect {
            _ = try load(text)
        } throws: { error in
            guard let error = error as? ManifestError, case .invalidJSON(let syntax) = error.problem else {
                return false
            }
            return syntax.line == 3 && syntax.column > 1 && "\(error)".contains("Test.freshair/manifest.json")
        }
    }

    @Test(arguments: [
        (#"[{"filename": "../etc/passwd"}]"#, "would step outside the bundle"),
        (#"[{"filename": "/etc/passwd"}]"#, "absolute"),
        (#"[{"filename": "a//b"}]"#, "empty folder name"),
        (#"[{"filename": "a\\b"}]"#, "backslash"),
        (#"[{"filename": "ok.md"}, {"sha": "abc"}]"#, "\"filename\" is missing"),
        (#"[{"filename": "a.md", "condition": "platform == "}]"#, "column 13"),
        (
            #"[{"filename": "a.md", "conditions": [{"key": "x", "value": "1", "comparison": "about"}]}]"#,
            "unknown comparison"
        ),
        (#"{"nothing": true}"#, "expected an array"),
    ])
    func badEntriesAreRefusedWithTheirPosition(json: String, expected: String) {
        #expect {
            _ = try load(json)
        } throws: { error in
            "\(error)".contains(expected) && "\(error)".contains("Test.freshair/manifest.json")
        }
    }

    @Test(
        "A malformed digest or size loads as the entry's defect, for a device that selects it to refuse",
        arguments: [
            (
                #"[{"filename": "a.md", "sha": "ABCDEF012345"}]"#,
                "40 (SHA-1) or 64 (SHA-256) hex digits, found \"ABCDEF012345\""
            ),
            (#"[{"filename": "a.md", "size": -4}]"#, "\"size\" must be a whole number of bytes, found -4"),
        ]
    )
    func malformedDigestOrSizeIsADefect(json: String, expected: String) throws {
        let entry = try #require(try load(json).entries.first)
        #expect(entry.hash == nil && entry.size == nil)
        #expect(entry.defect.map { "\($0)".contains(expected) } == true)
    }

    @Test func entryErrorsNameIndexAndFilename() {
        #expect {
            _ = try load(#"[{"filename": "ok.md"}, {"filename": "bad.md", "condition": "a ="}]"#)
        } throws: { error in
            guard let error = error as? ManifestError, case .entry(let index, let filename, _) = error.problem else {
                return false
            }
            return index == 1 && filename == "bad.md"
        }
    }
}
