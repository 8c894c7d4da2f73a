import FreshAir
import Testing

/// The rollout bucket is a pure function of an install ID and a bundle URL, so its spread is
/// checked here over many installs, with fixed inputs, rather than by a few real syncs.
@Suite("Rollout buckets: stable, evenly spread, independent between bundles")
struct RolloutBucketTests {
    static let bundle = "https://cdn.example.com/App.freshair/"
    static let installs = (0..<10_000).map { "install-\($0)" }

    @Test("A bucket never changes for an install and bundle: the same SHA-256 rule as ever")
    func stable() {
        // Changing the rule would move every install in every running rollout: pinned values.
        #expect(RolloutBucket.of(installID: "install-0", bundle: Self.bundle) == 13)
        #expect(RolloutBucket.of(installID: "install-1", bundle: Self.bundle) == 95)
        #expect(RolloutBucket.of(installID: "8F2C1E4A-0000-4000-8000-000000000001", bundle: Self.bundle) == 88)
    }

    @Test("10,000 installs: half below 50, each tenth near a tenth")
    func evenlySpread() {
        let buckets = Self.installs.map { RolloutBucket.of(installID: $0, bundle: Self.bundle) }
        #expect(buckets.allSatisfy { (0...99).contains($0) })
        let firstHalf = buckets.filter { $0 < 50 }.count
        #expect((4_700...5_300).contains(firstHalf), "\(firstHalf) of 10,000 below 50")
        for tenth in 0..<10 {
            let count = buckets.filter { $0 / 10 == tenth }.count
            #expect((850...1_150).contains(count), "\(count) installs in buckets \(tenth * 10)–\(tenth * 10 + 9)")
        }
    }

    @Test("The first 10% of one bundle are not the first 10% of another")
    func independentBetweenBundles() {
        let other = "https://cdn.example.com/Other.freshair/"
        let inBoth = Self.installs.filter {
            RolloutBucket.of(installID: $0, bundle: Self.bundle) < 10
                && RolloutBucket.of(installID: $0, bundle: other) < 10
        }.count
        // Independent buckets put about 1% in both; the same buckets would put 10%.
        #expect((50...200).contains(inBoth), "\(inBoth) of 10,000 installs in the first 10% of both")
    }
}
