/// breeze's version, as `breeze --version` prints it and every request names it.
package enum BreezeVersion {
    package static let current = "0.1.0"
    /// Sent as `User-Agent`, so a server's or bucket's access log can tell breeze's requests apart.
    package static let userAgent = "breeze/\(current)"
}
