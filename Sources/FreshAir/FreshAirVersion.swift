/// The version of FreshAir and breeze, set here only: `breeze --version` prints it, every
/// request names it in `User-Agent`, and CHANGELOG.md records what each one brought.
package enum FreshAirVersion {
    package static let current = "0.1.0"

    /// What the library adds to `User-Agent`: after an app's own product token when it sends one
    /// (`MyApp/3.2 FreshAir/0.1.0`), alone otherwise, so a server's log can tell FreshAir's
    /// requests apart.
    package static func userAgent(after appAgent: String?) -> String {
        let token = "FreshAir/\(current)"
        guard let appAgent, !appAgent.isEmpty else { return token }
        return appAgent.contains(token) ? appAgent : appAgent + " " + token
    }
}
