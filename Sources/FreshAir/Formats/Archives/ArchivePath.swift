import Foundation

/// The rules an archive entry's path and a link's target must keep, on bytes.
enum ArchivePath {
    /// Archive paths may start with `./` and folders end with `/`; anything else unusual is
    /// refused. Returns `nil` for the archive's own root (`./`).
    static func sanitize(_ raw: String) throws(ArchiveError) -> BundlePath? {
        var bytes = Substring(raw).utf8[...]
        while bytes.starts(with: "./".utf8) { bytes = bytes.dropFirst(2) }
        while bytes.last == UInt8(ascii: "/") { bytes = bytes.dropLast() }
        if bytes.isEmpty || bytes.elementsEqual(".".utf8) { return nil }
        do { return try BundlePath(String(Substring(bytes))) } catch {
            throw ArchiveError(.unsafeEntry, error.reason, entry: raw)
        }
    }

    /// Whether a relative link target, resolved from the link's folder, stays inside. On
    /// bytes, as the kernel resolves it: split on 0x2F, `.` and `..` exactly; no control bytes.
    static func staysInside(_ target: String, from link: BundlePath) -> Bool {
        let bytes = target.utf8
        guard let first = bytes.first, first != UInt8(ascii: "/"), !bytes.contains(where: { $0 < 0x20 || $0 == 0x7F })
        else {
            return false
        }
        var depth = link.components.count - 1
        for component in bytes.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: true) {
            if component.elementsEqual(".".utf8) { continue }
            depth += component.elementsEqual("..".utf8) ? -1 : 1
            if depth < 0 { return false }
        }
        return true
    }
}
