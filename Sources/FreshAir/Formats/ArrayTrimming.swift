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

extension Array {
    /// Keeps, in order and in place, the elements whose `keep` is `true` (one for each element).
    mutating func keep(_ keep: [Bool]) {
        precondition(keep.count == count)
        var kept = 0
        for index in indices where keep[index] {
            self[kept] = self[index]
            kept += 1
        }
        removeSubrange(kept...)
    }
}

extension Array {
    /// Makes room for `extra` more elements, growing by a quarter where `append` would double:
    /// lists reserved for a manifest's entries then take a few more (the folders above them), and
    /// doubling left them twice the room they needed.
    mutating func reserveGently(_ extra: Int) {
        let needed = count + extra
        guard needed > capacity else { return }
        reserveCapacity(Swift.max(needed, count + count / 4, 16))
    }
}
