/// Where a JSON document could not be read: 1-based line and column (in characters), with
/// what was wrong, so that an author can find the typo.
package struct JSONSyntaxError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The line where the text stopped making sense, 1-based.
    package var line: Int
    /// The column, 1-based, in bytes.
    package var column: Int
    /// What was expected.
    package var detail: String
    package var description: String { "invalid JSON at line \(line), column \(column): \(detail)" }

    /// An error at `line` and `column`.
    package init(line: Int, column: Int, detail: String) {
        self.line = line
        self.column = column
        self.detail = detail
    }

    /// An error at byte `offset` of `bytes`.
    init(offset: Int, in bytes: UnsafeBufferPointer<UInt8>, detail: String) {
        var line = 1
        var column = 1
        for byte in bytes.prefix(offset) {
            if byte == UInt8(ascii: "\n") {
                line += 1
                column = 1
            } else if byte & 0xC0 != 0x80 {  // Count characters, not UTF-8 continuation bytes.
                column += 1
            }
        }
        self.init(line: line, column: column, detail: detail)
    }
}
