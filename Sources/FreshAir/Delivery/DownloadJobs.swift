/// A sync's downloads, one job per distinct content, each naming its files by position in the
/// plan's downloads: the first file, whose bytes are fetched, and the others listed with the
/// same digest, linked to it once it lands.
///
/// A job is 4 bytes, and only the few jobs with other files keep a list of them: jobs are held
/// through every download.
struct DownloadJobs: RandomAccessCollection, Sendable {
    private var downloads: [Int32] = []
    private var others: [Int32: [Int32]] = [:]

    init() {}

    /// One job for each position, with no other files.
    init(downloading positions: some Sequence<Int>) {
        for position in positions { append(download: position) }
    }

    var startIndex: Int { 0 }
    var endIndex: Int { downloads.count }

    /// Job `job`: the position whose bytes are fetched, and the other positions given them.
    subscript(job: Int) -> (download: Int, alsoAt: [Int32]) {
        (Int(downloads[job]), others[Int32(job)] ?? [])
    }

    /// A new job, for the file at `position`.
    mutating func append(download position: Int) {
        precondition(position >= 0 && position <= Int(Int32.max))
        downloads.append(Int32(position))
    }

    /// Gives job `job`'s bytes to the file at `position` as well.
    mutating func add(_ position: Int, toJob job: Int) {
        others[Int32(job), default: []].append(Int32(position))
    }

    /// Room for `count` more jobs.
    mutating func reserveCapacity(_ count: Int) { downloads.reserveCapacity(downloads.count + count) }
}
