import Foundation

/// `presentation.json`: a screen the content asks the app to show, as data. The app decides
/// what to do with it.
///
/// `{"screen": "ForceUpgrade", "viewController": "RZUpgradeViewController",
///   "configuration": {"forceUpgrade": true, "releaseNotes": [...]}}`
public struct Presentation: Sendable, Hashable {
    public var screen: String?
    public var viewController: String?
    public var configuration: [String: JSONValue]

    /// Reads the document; the old example's `"key" = value` and trailing commas are accepted.
    public init(data: Data, source: String) throws(ManifestError) {
        let document: Any
        do { document = try LenientJSON.parse(data) } catch { throw ManifestError(source: source, problem: .invalidJSON(error)) }
        guard let object = document as? [String: Any] else {
            throw ManifestError(source: source, problem: .unexpectedShape("expected an object with \"screen\" and \"configuration\""))
        }
        screen = object["screen"] as? String
        viewController = object["viewController"] as? String
        configuration = (object["configuration"] as? [String: Any] ?? [:]).mapValues(JSONValue.init)
    }
}

/// Any JSON value, for configuration the library passes through untouched.
public enum JSONValue: Sendable, Hashable {
    case string(String)
    case number(Double)
    case bool(Bool)
    case array([JSONValue])
    case object([String: JSONValue])
    case null

    init(_ any: Any) {
        switch any {
        case let text as String: self = .string(text)
        case let number as NSNumber where String(cString: number.objCType) == "c": self = .bool(number.boolValue)
        case let number as NSNumber: self = .number(number.doubleValue)
        case let list as [Any]: self = .array(list.map(JSONValue.init))
        case let object as [String: Any]: self = .object(object.mapValues(JSONValue.init))
        default: self = .null
        }
    }

    public var string: String? { if case .string(let value) = self { value } else { nil } }
    public var bool: Bool? { if case .bool(let value) = self { value } else { nil } }
    public var number: Double? { if case .number(let value) = self { value } else { nil } }
    public var array: [JSONValue]? { if case .array(let value) = self { value } else { nil } }
    public var object: [String: JSONValue]? { if case .object(let value) = self { value } else { nil } }
}
