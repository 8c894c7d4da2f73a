/// Paths in an order of their own, most of them read from a list held anyway: a summary's
/// downloaded paths are positions in the plan's paths, which are shared, not copied.
///
/// Equal, hashed, encoded and decoded as the list of paths it reads as, however it holds them.
struct PathsByPosition: PathsAsBytes, Sendable {
    /// Paths of its own (a few: the manifests, rebuilt files' chunk indexes).
    private var own = PathList()
    /// The list that positions point into.
    private let shared: PathList
    /// Each path: a position in `shared`, or `-1 - i` for path `i` of `own`.
    private var order: [Int32] = []

    /// No paths, or `paths`.
    init(_ paths: [String] = []) {
        shared = PathList()
        for path in paths { append(path) }
    }

    /// No paths yet, to be read from `shared` by position.
    init(readingFrom shared: PathList) { self.shared = shared }

    var count: Int { order.count }

    /// Adds a path of its own.
    mutating func append(_ path: String) {
        own.append(path.utf8)
        order.append(Int32(-own.count))
    }

    /// Adds the path at `position` of the shared list.
    mutating func append(position: Int) {
        precondition(position < shared.count, "a position outside the shared paths")
        order.append(Int32(position))
    }

    /// Room for `count` more paths.
    mutating func reserveCapacity(_ count: Int) { order.reserveCapacity(order.count + count) }

    /// The UTF-8 bytes of the path at `index`, read in place.
    func bytes(at index: Int) -> ArraySlice<UInt8> {
        let place = Int(order[index])
        return place >= 0 ? shared.bytes(at: place) : own.bytes(at: -1 - place)
    }
}
