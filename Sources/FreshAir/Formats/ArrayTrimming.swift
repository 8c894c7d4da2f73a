extension Array {
    /// Gives back the room beyond `count` when it is more than an eighth (and 1,024 elements):
    /// a list that grew by doubling, or was filtered in place, would hold it for as long as it
    /// lives. The elements move to a list of their exact size.
    ///
    /// `Array(self[...])` does not do it: a slice of the whole list keeps the same storage.
    mutating func trimRoom() {
        guard capacity - count > Swift.max(1024, count / 8) else { return }
        var trimmed: [Element] = []
        trimmed.reserveCapacity(count)
        trimmed.append(contentsOf: self)
        self = trimmed
    }
}
