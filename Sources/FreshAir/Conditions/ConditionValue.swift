import Foundation

/// A value a condition compares: what the environment holds for a key, or a literal
/// written in the condition.
///
/// Numbers keep their text, so that `8.10` stays distinct from `8.1` when compared as a
/// version.
public enum ConditionValue: Sendable, Hashable {
    /// Text.
    case string(String)
    /// A number, kept as written so that `1.10` stays a version-like value.
    case number(String)
    /// `true` or `false` (`YES`/`NO` too).
    case bool(Bool)
    /// A list (`{'a', 'b'}`), for `IN` and `CONTAINS`.
    case list([ConditionValue])
    /// Nested values reached by key paths such as `defaults.flag`.
    case map([String: ConditionValue])
    /// `nil` / `NULL` written in a condition.
    case null

    /// The value as text, for string operators; `nil` for lists, maps and null.
    public var text: String? {
        switch self {
        case .string(let text), .number(let text): return text
        case .bool(let value): return value ? "true" : "false"
        case .list, .map, .null: return nil
        }
    }

    /// Appends an unambiguous spelling of the value (type, length, content) for
    /// ``ConditionEnvironment/fingerprint``.
    func appendCanonical(to text: inout String) {
        switch self {
        case .string(let value): text += "s\(value.utf8.count):\(value)"
        case .number(let value): text += "n\(value.utf8.count):\(value)"
        case .bool(let value): text += value ? "t" : "f"
        case .null: text += "0"
        case .list(let items):
            text += "[\(items.count):"
            for item in items { item.appendCanonical(to: &text) }
        case .map(let entries):
            text += "{\(entries.count):"
            for key in entries.keys.sorted() {
                ConditionValue.string(key).appendCanonical(to: &text)
                entries[key]!.appendCanonical(to: &text)
            }
        }
    }

    /// The value read as a version, when it is one (`"8.4"`, `9`, `"2.0-beta1"`).
    var version: Version? {
        switch self {
        case .string(let text), .number(let text): return Version(text)
        default: return nil
        }
    }

    /// The value read as a boolean: `true`/`YES`/`1` and `false`/`NO`/`0`, as NSPredicate does.
    var truth: Bool? {
        switch self {
        case .bool(let value): return value
        case .number(let text): return Double(text).map { $0 != 0 }
        case .string(let text):
            switch text.lowercased() {
            case "true", "yes", "1": return true
            case "false", "no", "0": return false
            default: return nil
            }
        default: return nil
        }
    }
}

extension ConditionValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByBooleanLiteral, ExpressibleByArrayLiteral,
    ExpressibleByDictionaryLiteral
{
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int) { self = .number(String(value)) }
    public init(floatLiteral value: Double) { self = .number(String(value)) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(arrayLiteral elements: ConditionValue...) { self = .list(elements) }
    public init(dictionaryLiteral elements: (String, ConditionValue)...) {
        self = .map(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}

extension ConditionValue: CustomStringConvertible {
    public var description: String {
        switch self {
        case .string(let text): return "'\(text)'"
        case .number(let text): return text
        case .bool(let value): return value ? "true" : "false"
        case .list(let values): return "{" + values.map(\.description).joined(separator: ", ") + "}"
        case .map(let values):
            return "{" + values.keys.sorted().map { "\($0): \(values[$0]!)" }.joined(separator: ", ") + "}"
        case .null: return "nil"
        }
    }
}
