import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

#if os(Linux)
/// Calls Glibc has but its Swift overlay does not export, looked up once.
enum LinuxCalls {
    static let syncfs = symbol("syncfs", as: (@convention(c) (Int32) -> Int32).self)
    static let syncFileRange = symbol(
        "sync_file_range",
        as: (@convention(c) (Int32, Int64, Int64, UInt32) -> Int32).self
    )
    /// `SYNC_FILE_RANGE_WRITE`: start write-back of dirty pages, do not wait.
    static let syncFileRangeWrite: UInt32 = 2

    private static func symbol<Function>(_ name: String, as type: Function.Type) -> Function? {
        dlsym(nil, name).map { unsafeBitCast($0, to: type) }
    }
}
#endif
