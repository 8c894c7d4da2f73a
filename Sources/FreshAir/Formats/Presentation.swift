package import Foundation

/// `presentation.json`: a screen the content asks the app to show, as data. The app decides
/// what to do with it.
///
/// `{"screen": "ForceUpgrade", "viewController": "RZUpgradeViewController",
///   "configuration": {"forceUpgrade": true, "releaseNotes": [...]}}`
package struct Presentation: Sendable, Hashable {
    /// The screen the feature belongs to.
    package var screen: String?
    /// The view controller that presents it (the original's key).
    package var viewController: String?
    /// Anything else the app reads, as found.
    package var configuration: [String: JSONValue]

    /// The whole document as strict JSON, members in a stable order.
    package var json: Data {
        var members: [(key: String, value: JSONValue)] = []
        if let screen { members.append(("screen", .string(screen))) }
        if let viewController { members.append(("viewController", .string(viewController))) }
        let configuration = configuration.sorted { $0.key < $1.key }.map { (key: $0.key, value: $0.value) }
        members.append(("configuration", .object(configuration)))
        return Data(JSONValue.object(members).serializedBytes(indent: 0))
    }

    /// The members FreshAir reads; `breeze validate` warns about any other.
    package static let knownMembers: Set<String> = ["screen", "viewController", "configuration"]

    /// Reads the document; the old example's `"key" = value` and trailing commas are accepted.
    package init(data: Data, source: String) throws(ManifestError) {
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
