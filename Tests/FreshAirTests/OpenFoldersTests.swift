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
    /// A folder of its own, opened: its descriptor and what it refers to. Whether a descriptor is
    /// still open is asked of both, as the number of one closed here may at once be another
    /// test's (the full run failed once so, asking of the number alone).
    struct Folder {
        let descriptor: Int32
        let device: UInt64
        let inode: UInt64
    }

    static func openFolder() -> Folder {
        var template = Array("/tmp/open-folders-XXXXXX".utf8CString)
        let path = String(cString: mkdtemp(&template)!)
        let descriptor = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        rmdir(path)  // the open descriptor keeps the folder as long as the test needs it
        var status = stat()
        fstat(descriptor, &status)
        return Folder(descriptor: descriptor, device: UInt64(status.st_dev), inode: UInt64(status.st_ino))
    }

    func path(_ text: String) -> BundlePath { BundlePath(trusted: text) }

    static func isOpen(_ folder: Folder) -> Bool {
        var status = stat()
        return fstat(folder.descriptor, &status) == 0 && UInt64(status.st_dev) == folder.device
            && UInt64(status.st_ino) == folder.inode
    }

    @Test("Full of folders in use, a new one is the caller's; once one is released, it makes room")
    func inUseIsNeverClosed() {
        let folders = OpenFolders(capacity: 2)
        let (a, b, c) = (Self.openFolder(), Self.openFolder(), Self.openFolder())
        #expect(folders.keep(a.descriptor, for: path("a")) == a.descriptor)
        #expect(folders.keep(b.descriptor, for: path("b")) == b.descriptor)
        #expect(folders.keep(c.descriptor, for: path("c")) == nil, "both kept descriptors are in use")
        #expect(Self.isOpen(a) && Self.isOpen(b) && Self.isOpen(c))
        folders.release(path("a"))
        #expect(folders.keep(c.descriptor, for: path("c")) == c.descriptor)
        #expect(!Self.isOpen(a), "the idle one was closed to make room")
        #expect(folders.take(path("a")) == nil && folders.take(path("b")) == b.descriptor && folders.count == 2)
    }

    @Test("Of the idle ones, the least recently used is closed")
    func leastRecentlyUsedGoes() {
        let folders = OpenFolders(capacity: 2)
        let (a, b, c) = (Self.openFolder(), Self.openFolder(), Self.openFolder())
        _ = folders.keep(a.descriptor, for: path("a"))
        _ = folders.keep(b.descriptor, for: path("b"))
        folders.release(path("a"))
        folders.release(path("b"))
        _ = folders.take(path("a"))  // a is now the more recently used
        folders.release(path("a"))
        #expect(folders.keep(c.descriptor, for: path("c")) == c.descriptor)
        #expect(Self.isOpen(a) && !Self.isOpen(b))
    }

    @Test("Two tasks opening the same folder share the first descriptor; the second is closed")
    func raceKeepsTheFirst() {
        let folders = OpenFolders(capacity: 4)
        let (first, second) = (Self.openFolder(), Self.openFolder())
        #expect(folders.keep(first.descriptor, for: path("x")) == first.descriptor)
        #expect(folders.keep(second.descriptor, for: path("x")) == first.descriptor)
        #expect(!Self.isOpen(second) && Self.isOpen(first) && folders.count == 1)
    }
}
