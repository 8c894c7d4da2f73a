import Foundation
import TestSupport
import Testing

@testable import FreshAir

@Suite("Numbers for a terminal, written as printf's %.Nf writes them")
struct FixedPointTests {
    @Test("Random values from a millionth to a billion, at 0 to 3 places: the same text as String(format:)")
    func matchesPrintf() {
        var generator = SeededGenerator()
        for _ in 0..<20_000 {
            let value = pow(10, Double.random(in: -6...9, using: &generator))
            for places in 0...3 {
                // Within a millionth of a tie, the product's own rounding may decide otherwise
                // than printf's exact expansion; durations and sizes never care.
                let scaled = value * pow(10, Double(places))
                guard abs(scaled - scaled.rounded(.down) - 0.5) > 1e-6 else { continue }
                #expect(
                    value.fixedPoint(places) == String(format: "%.\(places)f", value),
                    "\(value) at \(places), \(generator)"
                )
            }
        }
    }

    @Test("Carries, zero, its negative and values that round to it, and what has no digits")
    func edges() {
        #expect(9.999.fixedPoint(2) == "10.00")
        #expect(0.0.fixedPoint(2) == "0.00")
        #expect((-0.001).fixedPoint(2) == "0.00")  // printf writes "-0.00"; a duration never is
        #expect(1234.5678.fixedPoint(1) == "1234.6")
        #expect(Double.infinity.fixedPoint(2) == "inf")
        #expect(ByteCount(423_812_345).description == "423.8 MB")
        #expect(ByteCount(999).description == "999 B")
    }
}
