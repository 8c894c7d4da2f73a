import Testing

@testable import FreshAir

@Suite("A plan's files as columns: read back as they were appended, compacted in place as an array would be")
struct SelectedFilesTests {
    func randomFiles(_ count: Int, using generator: inout some RandomNumberGenerator) -> [SelectedFile] {
        let parts = ["a", "bb", "caf\u{e9}", "cafe\u{301}", "long name of more than fifteen bytes", "d/e", ""]
        return (0..<count).map { index in
            let path = (parts.randomElement(using: &generator)! + "/\(index)")
            let algorithm: ContentHash.Algorithm = Bool.random(using: &generator) ? .sha1 : .sha256
            let hash: ContentHash? = Bool.random(using: &generator) ? .of([UInt8(index % 251)], using: algorithm) : nil
            let size: Int64? = Bool.random(using: &generator) ? Int64.random(in: 0...1 << 40, using: &generator) : nil
            return SelectedFile(path: BundlePath(trusted: path), hash: hash, size: size)
        }
    }

    func same(_ files: SelectedFiles, _ array: [SelectedFile]) -> Bool {
        files.count == array.count
            && zip(files, array).allSatisfy { $0.path == $1.path && $0.hash == $1.hash && $0.size == $1.size }
            && array.indices.allSatisfy { files.hash(at: $0) == array[$0].hash && files.size(at: $0) == array[$0].size }
    }

    @Test("Random lists: the same files, the same order of paths, the same files kept, asked in order")
    func matchesAnArray() {
        var generator = SeededGenerator()
        for _ in 0..<200 {
            let array = randomFiles(Int.random(in: 0...60, using: &generator), using: &generator)
            var files = SelectedFiles(array)
            #expect(same(files, array), "\(generator)")
            for _ in 0..<20 where !array.isEmpty {
                let (left, right) = (
                    Int.random(in: array.indices, using: &generator), Int.random(in: array.indices, using: &generator)
                )
                #expect(files.pathPrecedes(left, right) == (array[left].path < array[right].path), "\(generator)")
            }
            let removed = Set((0..<array.count).filter { _ in Bool.random(using: &generator) })
            var asked: [BundlePath] = []
            var position = 0
            files.removeAll { file in
                asked.append(file.path)
                defer { position += 1 }
                return removed.contains(position)
            }
            #expect(asked == array.map(\.path), "\(generator)")
            let kept = array.indices.filter { !removed.contains($0) }.map { array[$0] }
            #expect(same(files, kept), "\(generator)")
            files.append(array.first ?? SelectedFile(path: BundlePath(trusted: "x"), hash: nil, size: 3))
            files.trimRoom()
            #expect(
                same(files, kept + [array.first ?? SelectedFile(path: BundlePath(trusted: "x"), hash: nil, size: 3)]),
                "\(generator)"
            )
        }
    }
}

@Suite("A set of paths held as bytes: found by their exact bytes, as a Set<String> of them would not")
struct PathSetTests {
    @Test("Random paths, composed and decomposed: every one found, others not, spellings told apart")
    func matchesBytes() {
        var generator = SeededGenerator()
        let parts = ["a", "B", "caf\u{e9}", "cafe\u{301}", "/", "long name of more than fifteen bytes"]
        func name() -> String {
            (0..<Int.random(in: 0...3, using: &generator)).map { _ in parts.randomElement(using: &generator)! }.joined()
        }
        for _ in 0..<100 {
            let listed = (0..<Int.random(in: 0...40, using: &generator)).map { _ in name() }
            let set = PathSet(PathList(listed))
            let bytes = Set(listed.map { Array($0.utf8) })
            for probe in listed + (0..<20).map({ _ in name() }) {
                #expect(
                    set.contains(probe) == bytes.contains(Array(probe.utf8)),
                    "\(probe.debugDescription), \(generator)"
                )
            }
        }
    }
}
