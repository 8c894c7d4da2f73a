import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Descriptors of a version's folders kept open for the tasks that write into them, so a folder
/// of 10,000 files is resolved once, not 10,000 times.
///
/// At most `capacity` are kept. A folder's descriptor is marked in use while a task writes
/// through it; when the cap is reached, the least recently used one that no task is using is
/// closed to make room. Downloads go in path order, so a bundle of more folders than the cap
/// still opens each folder about once, where a cache that stopped taking new folders opened
/// every file's folder past the cap (75,000 of 100,000 files, in 1,000 folders).
final class OpenFolders: Sendable {
    private struct Entry {
        var descriptor: Int32
        var users: Int
        var lastUse: UInt64
    }

    private struct State {
        var entries: [BundlePath: Entry] = [:]
        var clock: UInt64 = 0

        /// `folder`'s kept descriptor, marked in use now; `nil` when none is kept. Found once,
        /// then changed through its index: one hash of the path, not two.
        mutating func use(_ folder: BundlePath) -> Int32? {
            guard let index = entries.index(forKey: folder) else { return nil }
            clock += 1
            entries.values[index].users += 1
            entries.values[index].lastUse = clock
            return entries.values[index].descriptor
        }
    }

    private let state = Mutex(State())
    let capacity: Int

    init(capacity: Int) { self.capacity = capacity }

    deinit {
        for entry in state.withLock({ Array($0.entries.values) }) { close(entry.descriptor) }
    }

    /// How many descriptors are open, for tests.
    var count: Int { state.withLock { $0.entries.count } }

    /// `folder`'s kept descriptor, marked in use until ``release(_:)``; `nil` when none is kept.
    func take(_ folder: BundlePath) -> Int32? {
        state.withLock { state in state.use(folder) }
    }

    /// Keeps `opened`, a descriptor just opened for `folder`, marked in use until
    /// ``release(_:)``, and returns the descriptor to use: an earlier one when another task kept
    /// one meanwhile (`opened` is then closed). `nil` when the cap is reached and every kept
    /// descriptor is in use: `opened` stays the caller's, to close.
    func keep(_ opened: Int32, for folder: BundlePath) -> Int32? {
        let (kept, evicted): (Int32?, Int32?) = state.withLock { state in
            if let earlier = state.use(folder) { return (earlier, nil) }
            state.clock += 1
            var evicted: Int32?
            if state.entries.count >= capacity {
                guard
                    let idle = state.entries.filter({ $0.value.users == 0 }).min(by: {
                        $0.value.lastUse < $1.value.lastUse
                    })
                else { return (nil, nil) }
                state.entries[idle.key] = nil
                evicted = idle.value.descriptor
            }
            state.entries[folder] = Entry(descriptor: opened, users: 1, lastUse: state.clock)
            return (opened, evicted)
        }
        if let evicted { close(evicted) }
        if let kept, kept != opened { close(opened) }
        return kept
    }

    /// Ends one use of `folder`'s kept descriptor.
    func release(_ folder: BundlePath) {
        state.withLock { state in state.entries[folder]?.users -= 1 }
    }
}
