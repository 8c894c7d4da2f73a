import FreshAir

/// breeze's version, as `breeze --version` prints it and every request names it: the
/// project's one version (``FreshAirVersion``).
package enum BreezeVersion {
    package static let current = FreshAirVersion.current
    /// Sent as `User-Agent`, so a server's or bucket's access log can tell breeze's requests apart.
    package static let userAgent = "breeze/\(current)"
}
