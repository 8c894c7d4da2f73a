/// Bytes a chunk delta reuses: the previous copy of a file (`InputFile`), or a previous
/// package rebuilt from the files it installed (`ReassembledPackage`).
protocol ChunkSource: AnyObject {
    /// How many bytes there are.
    var size: Int64 { get throws }
    /// Fills `buffer` from `offset`; throws if the source ends first.
    func read(at offset: Int64, into buffer: UnsafeMutableRawBufferPointer) throws
}
