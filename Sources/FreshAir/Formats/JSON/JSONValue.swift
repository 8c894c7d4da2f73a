/// A JSON value as its author wrote it: object keys keep their order and spelling, numbers
/// keep their text (`1.10` stays `1.10`), so a document can be read, edited and written back
/// with only the intended change. Every JSON document FreshAir reads (manifests, release
/// notes, version records, indexes) goes through this one model and `JSONReader`.
package enum JSONValue: Sendable {
    /// Key–value pairs in document order.
    case object([(key: String, value: JSONValue)])
    /// An array.
    case array([JSONValue])
    /// A string.
    case string(String)
    /// The number as written.
    case number(String)
    /// `true` or `false`.
    case bool(Bool)
    /// `null`.
    case null

    /// Reads a JSON document; see `JSONReader/parse(_:lenient:)`.
    package static func parse(
        _ bytes: some Collection<UInt8>,
        lenient: Bool = false
    ) throws(JSONSyntaxError) -> JSONValue {
        try JSONReader.parse(bytes, lenient: lenient)
    }

    /// The value of `key` in an object (the last, if the key repeats, as most readers do).
    package subscript(key: String) -> JSONValue? {
        guard case .object(let pairs) = self else { return nil }
        return pairs.last { $0.key == key }?.value
    }

    /// The string, if this is one.
    package var string: String? { if case .string(let text) = self { text } else { nil } }
    /// The boolean, if this is one.
    package var bool: Bool? { if case .bool(let value) = self { value } else { nil } }
    /// The elements, if this is an array.
    package var array: [JSONValue]? { if case .array(let items) = self { items } else { nil } }
    /// Whether this is `null`.
    package var isNull: Bool { if case .null = self { true } else { false } }
    /// The pairs of an object, in document order.
    package var pairs: [(key: String, value: JSONValue)]? { if case .object(let pairs) = self { pairs } else { nil } }
    /// An object as a dictionary (a repeated key keeps its last value).
    package var object: [String: JSONValue]? {
        guard case .object(let pairs) = self else { return nil }
        return Dictionary(pairs.map { ($0.key, $0.value) }, uniquingKeysWith: { $1 })
    }

    /// A number's text as written.
    package var numberText: String? { if case .number(let text) = self { text } else { nil } }
    /// A number as a `Double`.
    package var number: Double? { numberText.flatMap(Double.init) }
    /// A number's value as text: whole numbers as written, others as the shortest decimal
    /// that reads back the same (`1.10` is `1.1`), as the old tool's number objects printed
    /// them. Versions and condition values written as JSON numbers are read through this.
    package var numberValueText: String? {
        guard let text = numberText else { return nil }
        if let whole = Int64(text) { return String(whole) }
        return Double(text).map { String($0) }
    }

    /// A whole number (`3`, also `3.0` or `3e2`) that fits in 64 bits.
    package var integer: Int64? {
        guard let text = numberText else { return nil }
        if let exact = Int64(text) { return exact }
        guard let value = Double(text), value == value.rounded(), abs(value) < 9.2e18 else { return nil }
        return Int64(value)
    }

    /// Sets `key` in an object: in place when it exists, else after `after` (or at the end).
    package mutating func set(_ key: String, _ value: JSONValue, after: String? = nil) {
        guard case .object(var pairs) = self else { return }
        self = .null  // drop the second reference so the array is edited in place
        if let index = pairs.lastIndex(where: { $0.key == key }) {
            pairs[index].value = value
        } else if let after, let index = pairs.lastIndex(where: { $0.key == after }) {
            pairs.insert((key, value), at: index + 1)
        } else {
            pairs.append((key, value))
        }
        self = .object(pairs)
    }
}

extension JSONValue {
    /// Removes every member named `key` from an object.
    package mutating func remove(_ key: String) {
        guard case .object(var pairs) = self else { return }
        self = .null
        pairs.removeAll { $0.key == key }
        self = .object(pairs)
    }
}

extension JSONValue: Hashable {
    package static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.object(let a), .object(let b)):
            return a.count == b.count && zip(a, b).allSatisfy { $0.key == $1.key && $0.value == $1.value }
        case (.array(let a), .array(let b)): return a == b
        case (.string(let a), .string(let b)), (.number(let a), .number(let b)): return a == b
        case (.bool(let a), .bool(let b)): return a == b
        case (.null, .null): return true
        default: return false
        }
    }

    package func hash(into hasher: inout Hasher) {
        switch self {
        case .object(let pairs):
            hasher.combine(0)
            for pair in pairs {
                hasher.combine(pair.key)
                hasher.combine(pair.value)
            }
        case .array(let items):
            hasher.combine(1)
            hasher.combine(items)
        case .string(let text):
            hasher.combine(2)
            hasher.combine(text)
        case .number(let text):
            hasher.combine(3)
            hasher.combine(text)
        case .bool(let value): hasher.combine(value)
        case .null: hasher.combine(4)
        }
    }
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByBooleanLiteral, ExpressibleByArrayLiteral {
    package init(stringLiteral value: String) { self = .string(value) }
    package init(booleanLiteral value: Bool) { self = .bool(value) }
    package init(arrayLiteral elements: JSONValue...) { self = .array(elements) }

    /// A whole number.
    package init(_ value: some BinaryInteger) { self = .number(String(value)) }
}
