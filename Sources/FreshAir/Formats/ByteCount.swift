/// Bytes written the way people read them: `512 B`, `4.2 KB`, `1.1 GB`.
package struct ByteCount: CustomStringConvertible, Sendable {
    /// The count.
    package var bytes: Int64
    /// A count of `bytes`.
    package init(_ bytes: Int64) { self.bytes = bytes }
    package var description: String {
        let units = ["B", "KB", "MB", "GB", "TB"]
        var value = Double(bytes)
        var unit = 0
        while value >= 1000, unit < units.count - 1 {
            value /= 1000
            unit += 1
        }
        return unit == 0 ? "\(bytes) B" : "\(value.fixedPoint(1)) \(units[unit])"
    }
}

extension Double {
    /// The value rounded to `places` decimals (0 to 9), as `%.Nf` writes it, without
    /// `String(format:)`: its C arguments cost the runtime a run of type lookups on first use
    /// (1% of a no-change `breeze sync`, under `perf`).
    package func fixedPoint(_ places: Int) -> String {
        let places = min(max(places, 0), 9)
        var scale: Int64 = 1
        for _ in 0..<places { scale *= 10 }
        let scaled = (abs(self) * Double(scale)).rounded()
        guard isFinite, scaled < 9e18 else { return "\(self)" }
        let units = Int64(scaled)
        let fraction = String(units % scale)
        let sign = self < 0 && units != 0 ? "-" : ""
        guard places > 0 else { return sign + String(units) }
        return sign + String(units / scale) + "." + fraction.zeroPadded(to: places)
    }
}

extension String {
    /// The text with zeros in front up to `width` characters (`"7"` to `"07"`); as it is when it
    /// is that long already.
    package func zeroPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
