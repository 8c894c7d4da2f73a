import Foundation

extension Condition {
    /// Whether the condition holds on every device whose environment includes `known`,
    /// on none of them, or depends on keys `known` does not set (`nil`).
    ///
    /// Authoring tools ask this before any device exists: an entry whose condition is `false`
    /// for every platform a bundle targets is never selected, whatever the app version or
    /// locale. A key that `known` lacks is unknown here, not false as in
    /// ``evaluate(in:)``: some device may set it. `&&` and `||` follow three-valued logic
    /// (`false && unknown` is `false`, `true || unknown` is `true`).
    package func evaluate(knowing known: ConditionEnvironment) -> Bool? {
        switch self {
        case .always: return true
        case .never: return false
        case .not(let inner): return inner.evaluate(knowing: known).map(!)
        case .all(let parts): return Self.combine(parts, knowing: known, decidedBy: false)
        case .any(let parts): return Self.combine(parts, knowing: known, decidedBy: true)
        case .truth(let operand), .compare(let operand, _, .literal, _):
            return isKnown(operand, in: known) ? evaluate(in: known) : nil
        case .compare(let left, _, let right, _):
            return isKnown(left, in: known) && isKnown(right, in: known) ? evaluate(in: known) : nil
        }
    }

    /// `&&` (decided by a `false` part) or `||` (decided by a `true` one) in three-valued logic:
    /// a deciding part wins over an unknown one, and an unknown one over the rest.
    private static func combine(
        _ parts: [Condition],
        knowing known: ConditionEnvironment,
        decidedBy deciding: Bool
    ) -> Bool? {
        var result: Bool? = !deciding
        for part in parts {
            guard let value = part.evaluate(knowing: known) else {
                result = nil
                continue
            }
            if value == deciding { return deciding }
        }
        return result
    }

    /// The literal values the condition compares `key` with (`platform == 'iOS'`,
    /// `platform IN {'iOS', 'tvOS'}`): the values an author had in mind for that key.
    package func values(comparedWith key: String) -> Set<String> {
        switch self {
        case .always, .never, .truth: return []
        case .not(let inner): return inner.values(comparedWith: key)
        case .all(let parts), .any(let parts):
            return parts.reduce(into: []) { $0.formUnion($1.values(comparedWith: key)) }
        case .compare(let left, _, let right, _):
            switch (left, right) {
            case (.keyPath([key]), .literal(let value)), (.literal(let value), .keyPath([key])):
                return Self.texts(value)
            default: return []
            }
        }
    }

    private static func texts(_ value: ConditionValue) -> Set<String> {
        if case .list(let items) = value { return Set(items.compactMap(\.text)) }
        return value.text.map { [$0] } ?? []
    }

    private func isKnown(_ operand: Operand, in known: ConditionEnvironment) -> Bool {
        switch operand {
        case .literal: return true
        case .keyPath(let parts): return known.value(at: parts) != nil
        }
    }
}
