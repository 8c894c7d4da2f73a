extension Range<Int> {
    /// The first position whose `test` is `true`, where it is `false` for the positions before
    /// some place and `true` from there; the range's end when none is. A binary search: `test`
    /// is asked about log2 of the range's count positions.
    @inline(__always)
    func firstPosition(where test: (Int) -> Bool) -> Int {
        var (low, high) = (lowerBound, upperBound)
        while low < high {
            let middle = (low + high) / 2
            if test(middle) { high = middle } else { low = middle + 1 }
        }
        return low
    }
}
