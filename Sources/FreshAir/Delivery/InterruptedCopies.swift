/// The files an interrupted update left that this one links instead of downloading: for each
/// download, by its position in the plan, which of the interrupted folders holds a verified copy.
///
/// One byte pair a download, not a path string and a dictionary slot: resuming a large first sync
/// that was killed near its end would otherwise hold a string per file on top of the plan.
struct InterruptedCopies: Sendable {
    /// The folders interrupted updates left, newest first (``BundleStore/interruptedFolders()``).
    private let folders: [String]
    /// For each download: 0 when no folder has it, else the place of its folder in `folders`, plus one.
    private var holder: [UInt16]

    /// No copies at all.
    init() { (folders, holder) = ([], []) }

    /// For `count` downloads, none found yet in `folders` (at most 65,535 are looked in).
    init(folders: [String], count: Int) {
        self.folders = Array(folders.prefix(Int(UInt16.max)))
        holder = [UInt16](repeating: 0, count: self.folders.isEmpty ? 0 : count)
    }

    /// The folders looked in.
    var searched: [String] { folders }

    /// Records that the download at `position` has a verified copy in `searched[folder]`.
    mutating func found(_ position: Int, inFolder folder: Int) {
        holder[position] = UInt16(folder + 1)
    }

    /// Where the download at `position`, whose path is `path`, has a copy, or `nil`.
    func copy(of position: Int, at path: BundlePath) -> String? {
        guard position < holder.count, holder[position] != 0 else { return nil }
        return folders[Int(holder[position]) - 1] + "/" + path.string
    }

    /// Whether the download at `position` has a copy.
    func has(_ position: Int) -> Bool { position < holder.count && holder[position] != 0 }
}
