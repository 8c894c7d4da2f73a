import Foundation
import Testing

/// Every seed of the fuzz corpora and every input that once crashed a parser
/// (Fuzz/Regressions/<target>/), through the fuzz targets' own code and property checks: a
/// regression traps here as it trapped under libFuzzer. Serialized: the targets unpack into one
/// scratch folder per process, as under libFuzzer, and check that nothing else appeared there.
@Suite("Fuzzing's seeds and past crashes, replayed", .serialized)
struct FuzzRegressionTests {
    static let fuzzFolder = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent(
            "Fuzz"
        )

    static func inputs(in folder: String) -> [(target: FuzzTarget, file: URL)] {
        let root = fuzzFolder.appendingPathComponent(folder)
        let targets = (try? FileManager.default.contentsOfDirectory(atPath: root.path)) ?? []
        return targets.sorted().flatMap { name -> [(target: FuzzTarget, file: URL)] in
            guard let target = FuzzTarget(rawValue: name) else { return [] }
            let files =
                (try? FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent(name).path)) ?? []
            return files.sorted().map { (target, root.appendingPathComponent(name).appendingPathComponent($0)) }
        }
    }

    @Test("Every target has seeds, and each seed runs clean")
    func seeds() throws {
        let inputs = Self.inputs(in: "Seeds")
        #expect(Set(inputs.map(\.target)) == Set(FuzzTarget.allCases))
        for (target, file) in inputs { target.run(Array(try Data(contentsOf: file))) }
    }

    @Test("Inputs that crashed a parser once no longer do")
    func pastCrashes() throws {
        let inputs = Self.inputs(in: "Regressions")
        #expect(!inputs.isEmpty)
        for (target, file) in inputs { target.run(Array(try Data(contentsOf: file))) }
    }
}
