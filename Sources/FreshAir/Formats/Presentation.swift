import Foundation

/// `presentation.json`: a screen the content asks the app to show, as data. The app decides
/// what to do with it.
///
/// `{"screen": "ForceUpgrade", "viewController": "RZUpgradeViewController",
///   "configuration": {"forceUpgrade": true, "releaseNotes": [...]}}`
public struct Presentation: Sendable, Hashable {
    /// The screen the feature belongs to.
    public var screen: String?
    /// The view controller that presents it (the original's key).
    public var viewController: String?
    /// Anything else the app reads, as found.
    public var configuration: [String: JSONValue]

    /// The members FreshAir reads; `breeze validate` warns about any other.
    public static let knownMembers: Set<String> = ["screen", "viewController", "configuration"]

    /// Reads the document; the old example's `"key" = value` and trailing commas are accepted.
    public init(data: Data, source: String) throws(ManifestError) {
        let object: JSONValue
        do { object = try JSONReader.parse(data, lenient: true) } catch {
            throw ManifestError(source: source, problem: .invalidJSON(error))
        }
        guard object.pairs != nil else {
            throw ManifestError(
                source: source,
                problem: .unexpectedShape("expected an object with \"screen\" and \"configuration\"")
            )
        }
        screen = object["screen"]?.string
        viewController = object["viewController"]?.string
        configuration = object["configuration"]?.object ?? [:]
    }
}
