import Foundation

/// Checks a JSON value against the schemas of `docs/json/`: the part of JSON Schema they use
/// (`type`, `required`, `properties`, `additionalProperties` (false, or a schema for the other
/// members), `items`, `enum`, `$ref`
/// within a schema or to a sibling file, `format: date-time`). Returns what does not match,
/// one line a problem, each naming its JSON path; empty when the value matches.
struct JSONSchemaCheck {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("docs/json")

    let file: String
    private let schema: [String: Any]

    init(_ file: String) throws {
        self.file = file
        let data = try Data(contentsOf: Self.folder.appendingPathComponent(file))
        schema = try JSONSerialization.jsonObject(with: data) as? [String: Any] ?? [:]
    }

    /// The problems of `text` (a command's standard output) against this schema.
    func problems(in text: String) -> [String] {
        guard let value = try? JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed]) else {
            return ["not JSON: \(text.prefix(200))"]
        }
        return problems(value, against: schema, root: schema, at: "$")
    }

    private func problems(_ value: Any, against node: [String: Any], root: [String: Any], at path: String) -> [String] {
        if let reference = node["$ref"] as? String {
            guard let (target, targetRoot) = resolve(reference, root: root) else { return ["\(path): no \(reference)"] }
            return problems(value, against: target, root: targetRoot, at: path)
        }
        var found: [String] = []
        if let type = node["type"] as? String, !Self.matches(value, type) {
            return ["\(path): \(Self.describe(value)) is not of type \(type)"]
        }
        if let allowed = node["enum"] as? [Any], !allowed.contains(where: { "\($0)" == "\(value)" }) {
            found.append("\(path): \(value) is not one of \(allowed)")
        }
        if node["format"] as? String == "date-time", let text = value as? String,
            (try? Date(text, strategy: .iso8601)) == nil
        {
            found.append("\(path): \(text) is not an ISO 8601 date-time")
        }
        if let object = value as? [String: Any] {
            let properties = node["properties"] as? [String: [String: Any]] ?? [:]
            for key in node["required"] as? [String] ?? [] where object[key] == nil {
                found.append("\(path): \(key) is missing")
            }
            for (key, member) in object {
                if let property = properties[key] {
                    found += problems(member, against: property, root: root, at: "\(path).\(key)")
                } else if node["additionalProperties"] as? Bool == false {
                    found.append("\(path): \(key) is not in the schema")
                } else if let others = node["additionalProperties"] as? [String: Any] {
                    found += problems(member, against: others, root: root, at: "\(path).\(key)")
                }
            }
        }
        if let array = value as? [Any], let items = node["items"] as? [String: Any] {
            for (index, element) in array.enumerated() {
                found += problems(element, against: items, root: root, at: "\(path)[\(index)]")
            }
        }
        return found
    }

    /// `#/$defs/name` in `root`, or `file.json#/$defs/name` beside it.
    private func resolve(_ reference: String, root: [String: Any]) -> ([String: Any], [String: Any])? {
        let parts = reference.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
        var document = root
        if !parts[0].isEmpty {
            guard let other = try? JSONSchemaCheck(parts[0]) else { return nil }
            document = other.schema
        }
        var node: Any = document
        for key in (parts.count > 1 ? parts[1] : "").split(separator: "/") {
            guard let next = (node as? [String: Any])?[String(key)] else { return nil }
            node = next
        }
        return (node as? [String: Any]).map { ($0, document) }
    }

    private static func matches(_ value: Any, _ type: String) -> Bool {
        switch type {
        case "object": return value is [String: Any]
        case "array": return value is [Any]
        case "string": return value is String
        // JSONSerialization reads true and false as numbers of the C type `char`.
        case "boolean": return (value as? NSNumber).map { String(cString: $0.objCType) == "c" } ?? false
        case "integer":
            guard let number = value as? NSNumber, !matches(value, "boolean") else { return false }
            return number.doubleValue.rounded() == number.doubleValue
        case "number": return value is NSNumber && !matches(value, "boolean")
        case "null": return value is NSNull
        default: return false
        }
    }

    private static func describe(_ value: Any) -> String {
        "\(type(of: value)) \(String(describing: value).prefix(60))"
    }
}
