import FreshAir
import Testing

@Suite("Versions compare as versions")
struct VersionTests {
    @Test func numericComponentsCompareNumerically() {
        #expect(Version("8.10")! > Version("8.4")!)
        #expect(Version("10.0")! > Version("9.9.9")!)
        #expect(Version("1.2")! == Version("1.2.0")!)
        #expect(Version("1.2")!.hashValue == Version("1.2.0.0")!.hashValue)
    }

    @Test func preReleasesSortBeforeTheRelease() {
        #expect(Version("2.0-beta1")! < Version("2.0")!)
        #expect(Version("2.0-beta1")! < Version("2.0-beta2")!)
        #expect(Version("2.0-beta2")! > Version("1.9")!)
    }

    @Test func parsesPrefixesAndRejectsText() {
        #expect(Version("v3.1")?.components == [3, 1])
        #expect(Version(" 4 ")?.components == [4])
        #expect(Version("iOS") == nil)
        #expect(Version("") == nil)
        #expect(Version("1.")?.components == [1])
        #expect(Version("1.")?.suffix == ".")
    }
}
