import Foundation
import Testing

@testable import FreshAir

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@Suite("Folders kept open: at most the cap, the least recently used idle one closed first")
struct OpenFoldersTests {
    static func openFolder() -> Int32 { open("/tmp", O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
    func path(_ text: String) -> BundlePath { BundlePath(trusted: text) }
    static func isOpen(_ descriptor: Int32) -> Bool { fcntl(descriptor, F_GETFD) != -1 }

    @Test("Full of folders in use, a new one is the caller's; once one is released, it makes room")
    func inUseIsNeverClosed() {
        let folders = OpenFolders(capacity: 2)
        let (a, b, c) = (Self.openFolder(), Self.openFolder(), Self.openFolder())
        #expect(folders.keep(a, for: path("a")) == a)
        #expect(folders.keep(b, for: path("b")) == b)
        #expect(folders.keep(c, for: path("c")) == nil, "both kept descriptors are in use")
        #expect(Self.isOpen(a) && Self.isOpen(b) && Self.isOpen(c))
        folders.release(path("a"))
        #expect(folders.keep(c, for: path("c")) == c)
        #expect(!Self.isOpen(a), "the idle one was closed to make room")
        #expect(folders.take(path("a")) == nil && folders.take(path("b")) == b && folders.count == 2)
    }

    @Test("Of the idle ones, the least recently used is closed")
    func leastRecentlyUsedGoes() {
        let folders = OpenFolders(capacity: 2)
        let (a, b, c) = (Self.openFolder(), Self.openFolder(), Self.openFolder())
        _ = folders.keep(a, for: path("a"))
        _ = folders.keep(b, for: path("b"))
        folders.release(path("a"))
        folders.release(path("b"))
        _ = folders.take(path("a"))  // a is now the more recently used
        folders.release(path("a"))
        #expect(folders.keep(c, for: path("c")) == c)
        #expect(Self.isOpen(a) && !Self.isOpen(b))
    }

    @Test("Two tasks opening the same folder share the first descriptor; the second is closed")
    func raceKeepsTheFirst() {
        let folders = OpenFolders(capacity: 4)
        let (first, second) = (Self.openFolder(), Self.openFolder())
        #expect(folders.keep(first, for: path("x")) == first)
        #expect(folders.keep(second, for: path("x")) == first)
        #expect(!Self.isOpen(second) && Self.isOpen(first) && folders.count == 1)
    }
}
