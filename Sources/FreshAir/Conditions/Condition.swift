import Foundation

/// A parsed condition: the one tree that both the string language
/// (`platform == 'iOS' && systemVersion > 8.4`) and the JSON form
/// (`[{"key", "value", "comparison"}]`) compile into.
///
/// Evaluation is pure and total: a comparison with a key the environment lacks is false (`!=`
/// included; its negation, `NOT (a == b)`, is true), never a crash.
package indirect enum Condition: Sendable, Hashable {
    /// True for every device (an entry with no condition).
    case always
    /// True for no device (`FALSEPREDICATE`).
    case never
    /// `NOT`: true when the inner condition is false.
    case not(Condition)
    /// `AND`: true when every part is.
    case all([Condition])
    /// `OR`: true when any part is.
    case any([Condition])
    /// A comparison of two operands with an operator and its `[cd]` options.
    case compare(Operand, ComparisonOperator, Operand, ComparisonOptions)
    /// A bare operand used as a predicate (`defaults.betaEnabled`): true when it reads as true.
    case truth(Operand)

    /// One side of a comparison.
    package enum Operand: Sendable, Hashable, CustomStringConvertible {
        /// A key of the environment, dotted into maps (`defaults.flag`).
        case keyPath([String])
        /// A value written in the condition.
        case literal(ConditionValue)

        package var description: String {
            switch self {
            case .keyPath(let parts): return parts.joined(separator: ".")
            case .literal(let value): return value.description
            }
        }
    }

    /// Whether the condition holds in `environment`.
    package func evaluate(in environment: ConditionEnvironment) -> Bool {
        switch self {
        case .always: return true
        case .never: return false
        case .not(let inner): return !inner.evaluate(in: environment)
        case .all(let parts): return parts.allSatisfy { $0.evaluate(in: environment) }
        case .any(let parts): return parts.contains { $0.evaluate(in: environment) }
        case .truth(let operand):
            return resolve(operand, in: environment)?.truth ?? false
        case .compare(let left, let op, let right, let options):
            guard let lhs = resolve(left, in: environment), let rhs = resolve(right, in: environment) else {
                return false  // An unknown key is false: the file is not for this device.
            }
            return op.holds(lhs, rhs, options: options)
        }
    }

    private func resolve(_ operand: Operand, in environment: ConditionEnvironment) -> ConditionValue? {
        switch operand {
        case .literal(let value): return value
        case .keyPath(let parts): return environment.value(at: parts)
        }
    }
}

/// Modifiers written after an operator, as in NSPredicate: `==[c]` ignores case, `[d]`
/// ignores diacritics.
package struct ComparisonOptions: OptionSet, Sendable, Hashable {
    package let rawValue: UInt8
    package init(rawValue: UInt8) { self.rawValue = rawValue }
    /// `[c]`: letters compare without regard to case.
    package static let caseInsensitive = ComparisonOptions(rawValue: 1)
    /// `[d]`: letters compare without regard to accents.
    package static let diacriticInsensitive = ComparisonOptions(rawValue: 2)
}

/// The comparisons a condition can make.
package enum ComparisonOperator: String, Sendable, Hashable, CaseIterable {
    /// `==` (also `=`): equal; versions compare as versions.
    case equal = "=="
    /// `!=` (also `<>`): not equal; false when the key is unknown.
    case notEqual = "!="
    /// `<`: numbers and versions by value, strings by code point.
    case less = "<"
    /// `<=` (also `=<`).
    case lessOrEqual = "<="
    /// `>`.
    case greater = ">"
    /// `>=` (also `=>`).
    case greaterOrEqual = ">="
    /// `IN`: the left value is one of the right-hand list's.
    case `in` = "IN"
    /// `BEGINSWITH`: the left string starts with the right one.
    case beginsWith = "BEGINSWITH"
    /// `ENDSWITH`: the left string ends with the right one.
    case endsWith = "ENDSWITH"
    /// `CONTAINS`: the left string holds the right one, or the left list holds the right value.
    case contains = "CONTAINS"

    /// The operator for a JSON-form `comparison` name (`eq ne gt gte lt lte`, or a symbol).
    package init?(jsonName: String) {
        switch jsonName.lowercased() {
        case "eq", "==", "=": self = .equal
        case "ne", "!=", "<>": self = .notEqual
        case "gt", ">": self = .greater
        case "gte", "ge", ">=": self = .greaterOrEqual
        case "lt", "<": self = .less
        case "lte", "le", "<=": self = .lessOrEqual
        case "in": self = .in
        case "beginswith": self = .beginsWith
        case "endswith": self = .endsWith
        case "contains": self = .contains
        default: return nil
        }
    }

    func holds(_ lhs: ConditionValue, _ rhs: ConditionValue, options: ComparisonOptions) -> Bool {
        switch self {
        case .equal: return Self.equal(lhs, rhs, options)
        case .notEqual: return !Self.equal(lhs, rhs, options)
        case .less: return Self.order(lhs, rhs, options).map { $0 < 0 } ?? false
        case .lessOrEqual: return Self.order(lhs, rhs, options).map { $0 <= 0 } ?? false
        case .greater: return Self.order(lhs, rhs, options).map { $0 > 0 } ?? false
        case .greaterOrEqual: return Self.order(lhs, rhs, options).map { $0 >= 0 } ?? false
        case .in:
            switch rhs {
            case .list(let values): return values.contains { Self.equal(lhs, $0, options) }
            case .map(let values): return lhs.text.map { values[$0] != nil } ?? false
            default:
                guard let needle = lhs.text, let haystack = rhs.text else { return false }
                return Self.fold(haystack, options).contains(Self.fold(needle, options))
            }
        case .contains:
            if case .list(let values) = lhs { return values.contains { Self.equal($0, rhs, options) } }
            return ComparisonOperator.in.holds(rhs, lhs, options: options)
        case .beginsWith, .endsWith:
            guard let text = lhs.text, let affix = rhs.text else { return false }
            let (folded, foldedAffix) = (Self.fold(text, options), Self.fold(affix, options))
            return self == .beginsWith ? folded.hasPrefix(foldedAffix) : folded.hasSuffix(foldedAffix)
        }
    }

    /// Equality: versions as versions (`1.2 == 1.2.0`), booleans as booleans, else text.
    private static func equal(_ lhs: ConditionValue, _ rhs: ConditionValue, _ options: ComparisonOptions) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): return true
        case (.null, _), (_, .null): return false
        case (.bool(let value), _): return rhs.truth == value
        case (_, .bool(let value)): return lhs.truth == value
        case (.list(let left), .list(let right)): return left == right
        default: break
        }
        if let left = lhs.version, let right = rhs.version, left.isPlainNumber, right.isPlainNumber {
            return left == right
        }
        guard let left = lhs.text, let right = rhs.text else { return false }
        return fold(left, options) == fold(right, options)
    }

    /// Ordering: versions when both sides read as versions (`8.10 > 8.4`), else text.
    private static func order(_ lhs: ConditionValue, _ rhs: ConditionValue, _ options: ComparisonOptions) -> Int? {
        if let left = lhs.version, let right = rhs.version {
            return left == right ? 0 : (left < right ? -1 : 1)
        }
        guard let left = lhs.text.map({ fold($0, options) }), let right = rhs.text.map({ fold($0, options) }) else {
            return nil
        }
        return left == right ? 0 : (left < right ? -1 : 1)
    }

    private static func fold(_ text: String, _ options: ComparisonOptions) -> String {
        var result = text
        if options.contains(.diacriticInsensitive) {
            result = result.folding(options: .diacriticInsensitive, locale: nil)
        }
        if options.contains(.caseInsensitive) { result = result.lowercased() }
        return result
    }
}
