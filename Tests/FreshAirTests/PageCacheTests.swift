import Testing

@testable import FreshAir

/// ``PageCache``: which reads reach the file.
@Suite("The page cache of spilled lists")
struct PageCacheTests {
    /// A file of pages whose bytes say their number, counting the reads that reach it.
    final class Reads {
        var pages: [Int] = []
        var length = 8

        func read(_ number: Int) -> [UInt8] {
            pages.append(number)
            return [UInt8](repeating: UInt8(number), count: length)
        }
    }

    @Test("A page held is not read again; neighbours keep their slots; a page sharing a slot takes it")
    func slots() {
        let file = Reads()
        var cache = PageCache(slots: 4)
        for number in [0, 1, 2, 3, 0, 1, 2, 3] {
            #expect(cache.page(number, length: 8, read: file.read) == [UInt8](repeating: UInt8(number), count: 8))
        }
        #expect(file.pages == [0, 1, 2, 3], "four neighbours fit four slots")
        _ = cache.page(4, length: 8, read: file.read)
        _ = cache.page(0, length: 8, read: file.read)
        _ = cache.page(1, length: 8, read: file.read)
        #expect(file.pages == [0, 1, 2, 3, 4, 0], "4 and 0 share a slot; 1 kept its own")
    }

    @Test("A page held shorter than asked (a list written further since) is read again")
    func grown() {
        let file = Reads()
        var cache = PageCache(slots: 2)
        file.length = 4
        _ = cache.page(1, length: 4, read: file.read)
        file.length = 8
        #expect(cache.page(1, length: 3, read: file.read).count == 4, "long enough: the held bytes")
        #expect(cache.page(1, length: 6, read: file.read).count == 8, "too short: read again")
        #expect(file.pages == [1, 1])
    }

    @Test("A page forgotten, or all of them, is read again; forgetting another page keeps it")
    func forgetting() {
        let file = Reads()
        var cache = PageCache(slots: 4)
        _ = cache.page(0, length: 8, read: file.read)
        _ = cache.page(1, length: 8, read: file.read)
        cache.forget(4)  // shares 0's slot, but is not held
        _ = cache.page(0, length: 8, read: file.read)
        cache.forget(1)
        _ = cache.page(1, length: 8, read: file.read)
        cache.forgetAll()
        _ = cache.page(0, length: 8, read: file.read)
        #expect(file.pages == [0, 1, 1, 0])
    }
}
