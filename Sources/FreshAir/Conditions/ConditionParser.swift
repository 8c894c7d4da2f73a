/// A condition that could not be read, with the 1-based column where reading stopped.
package struct ConditionSyntaxError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What was wrong, e.g. `expected ')'`.
    package var message: String
    /// 1-based column in ``source``.
    package var column: Int
    /// The condition as written.
    package var source: String

    package var description: String {
        "\(message) at column \(column) of \"\(source)\""
    }
}

extension Condition {
    /// Parses the string form, a readable subset of NSPredicate:
    /// comparisons (`== = != <> < <= > >=`, with `[c]`/`[d]` modifiers), `&&`/`AND`,
    /// `||`/`OR`, `!`/`NOT`, parentheses, quoted strings, numbers, `true`/`false`/`YES`/`NO`,
    /// `nil`, `IN {…}`, `BEGINSWITH`, `ENDSWITH`, `CONTAINS`, `TRUEPREDICATE`,
    /// `FALSEPREDICATE` and dotted key paths.
    ///
    /// - Throws: `ConditionSyntaxError` naming the column; also for a condition longer than
    ///   ``maxLength`` bytes or nesting `!`, parentheses and lists deeper than ``maxNesting``, limits
    ///   that keep a hostile manifest from exhausting the stack.
    package init(parsing source: String) throws(ConditionSyntaxError) {
        guard source.utf8.count <= Self.maxLength else {
            throw ConditionSyntaxError(
                message: "the condition is longer than \(Self.maxLength) bytes",
                column: 1,
                source: String(source.prefix(80)) + "…"
            )
        }
        var parser = ConditionParser(source: source)
        self = try parser.parseWhole()
    }

    /// The longest condition accepted, in UTF-8 bytes.
    package static let maxLength = 4096
    /// How deeply `!`/`NOT` and parentheses may nest.
    package static let maxNesting = 32

    /// Compiles the JSON form: every `{"key", "value", "comparison"}` must hold;
    /// `comparison` is one of `eq ne gt gte lt lte` and defaults to `gte`.
    package init(requirements: [(key: String, value: ConditionValue, comparison: ComparisonOperator)]) {
        let parts = requirements.map { requirement in
            Condition.compare(
                .keyPath(requirement.key.split(separator: ".").map(String.init)),
                requirement.comparison,
                .literal(requirement.value),
                []
            )
        }
        self = parts.isEmpty ? .always : (parts.count == 1 ? parts[0] : .all(parts))
    }
}

/// Tokens of the condition language; columns are 1-based.
private struct Token: Equatable {
    enum Kind: Equatable {
        case identifier(String)  // also keywords, matched case-insensitively by the parser
        case string(String)
        case number(String)
        case symbol(String)  // operators and punctuation
        case end
    }
    var kind: Kind
    var column: Int
}

/// A recursive-descent parser; precedence from loosest: OR, AND, NOT, comparison.
private struct ConditionParser {
    let source: String
    private var tokens: [Token] = []
    private var position = 0
    private var lexError: ConditionSyntaxError?
    /// `!` and `(` currently open, against `Condition/maxNesting`.
    private var nesting = 0

    init(source: String) {
        self.source = source
        do { tokens = try Self.tokenize(source) } catch { lexError = error }
    }

    mutating func parseWhole() throws(ConditionSyntaxError) -> Condition {
        if let lexError { throw lexError }
        if case .end = peek.kind { throw fail("empty condition") }
        let condition = try parseOr()
        guard case .end = peek.kind else { throw fail("unexpected \(describe(peek))") }
        return condition
    }

    private var peek: Token { tokens[position] }

    private mutating func advance() -> Token {
        let token = tokens[position]
        if position < tokens.count - 1 { position += 1 }
        return token
    }

    private func fail(_ message: String, at token: Token? = nil) -> ConditionSyntaxError {
        ConditionSyntaxError(message: message, column: (token ?? peek).column, source: source)
    }

    private func isKeyword(_ token: Token, _ words: String...) -> Bool {
        if case .identifier(let name) = token.kind { return words.contains(name.uppercased()) }
        return false
    }

    private func isSymbol(_ token: Token, _ symbols: String...) -> Bool {
        if case .symbol(let symbol) = token.kind { return symbols.contains(symbol) }
        return false
    }

    private mutating func parseOr() throws(ConditionSyntaxError) -> Condition {
        var parts = [try parseAnd()]
        while isSymbol(peek, "||") || isKeyword(peek, "OR") {
            _ = advance()
            parts.append(try parseAnd())
        }
        return parts.count == 1 ? parts[0] : .any(parts)
    }

    private mutating func parseAnd() throws(ConditionSyntaxError) -> Condition {
        var parts = [try parseNot()]
        while isSymbol(peek, "&&") || isKeyword(peek, "AND") {
            _ = advance()
            parts.append(try parseNot())
        }
        return parts.count == 1 ? parts[0] : .all(parts)
    }

    private mutating func parseNot() throws(ConditionSyntaxError) -> Condition {
        if isSymbol(peek, "!") || isKeyword(peek, "NOT") {
            try enter()
            defer { nesting -= 1 }
            _ = advance()
            return .not(try parseNot())
        }
        return try parsePrimary()
    }

    private mutating func enter() throws(ConditionSyntaxError) {
        nesting += 1
        if nesting > Condition.maxNesting {
            throw fail("'!', parentheses and lists nest deeper than \(Condition.maxNesting) levels")
        }
    }

    private mutating func parsePrimary() throws(ConditionSyntaxError) -> Condition {
        if isSymbol(peek, "(") {
            try enter()
            defer { nesting -= 1 }
            let open = advance()
            let inner = try parseOr()
            guard isSymbol(peek, ")") else {
                throw fail("expected ')' to close the '(' at column \(open.column), found \(describe(peek))")
            }
            _ = advance()
            return inner
        }
        if isKeyword(peek, "TRUEPREDICATE") {
            _ = advance()
            return .always
        }
        if isKeyword(peek, "FALSEPREDICATE") {
            _ = advance()
            return .never
        }
        let left = try parseOperand()
        guard let (op, negated) = try parseOperator() else {
            return .truth(left)
        }
        let options = try parseOptions()
        let right = try parseOperand()
        let comparison = Condition.compare(left, op, right, options)
        return negated ? .not(comparison) : comparison
    }

    /// Reads an operator, if one is next. `NOT IN` and friends come back negated.
    private mutating func parseOperator() throws(ConditionSyntaxError) -> (ComparisonOperator, Bool)? {
        let token = peek
        switch token.kind {
        case .symbol(let symbol):
            let op: ComparisonOperator? =
                switch symbol {
                case "==", "=": .equal
                case "!=", "<>": .notEqual
                case "<": .less
                case "<=", "=<": .lessOrEqual
                case ">": .greater
                case ">=", "=>": .greaterOrEqual
                default: nil
                }
            guard let op else { return nil }
            _ = advance()
            return (op, false)
        case .identifier(let word):
            var negated = false
            if word.uppercased() == "NOT", case .identifier = tokens[min(position + 1, tokens.count - 1)].kind {
                negated = true
                _ = advance()
            }
            guard case .identifier(let name) = peek.kind,
                let op = ComparisonOperator(rawValue: name.uppercased()),
                ![.equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual].contains(op)
            else {
                if negated { throw fail("expected IN, BEGINSWITH, ENDSWITH or CONTAINS after NOT") }
                return nil
            }
            _ = advance()
            return (op, negated)
        default:
            return nil
        }
    }

    private mutating func parseOptions() throws(ConditionSyntaxError) -> ComparisonOptions {
        guard isSymbol(peek, "[") else { return [] }
        _ = advance()
        guard case .identifier(let letters) = peek.kind else { throw fail("expected c or d inside [ ]") }
        var options: ComparisonOptions = []
        for letter in letters.lowercased() {
            switch letter {
            case "c": options.insert(.caseInsensitive)
            case "d": options.insert(.diacriticInsensitive)
            default: throw fail("unknown comparison option '\(letter)'; use [c], [d] or [cd]")
            }
        }
        _ = advance()
        guard isSymbol(peek, "]") else { throw fail("expected ']'") }
        _ = advance()
        return options
    }

    private mutating func parseOperand() throws(ConditionSyntaxError) -> Condition.Operand {
        let token = advance()
        switch token.kind {
        case .string(let text): return .literal(.string(text))
        case .number(let text): return .literal(.number(text))
        case .identifier(let name):
            switch name.uppercased() {
            case "TRUE", "YES": return .literal(.bool(true))
            case "FALSE", "NO": return .literal(.bool(false))
            case "NIL", "NULL": return .literal(.null)
            case "AND", "OR", "NOT", "IN", "BEGINSWITH", "ENDSWITH", "CONTAINS":
                throw fail("expected a key or a value, found \(name)", at: token)
            default:
                var parts = [name]
                while isSymbol(peek, ".") {
                    _ = advance()
                    guard case .identifier(let part) = peek.kind else {
                        throw fail("expected a key name after '.'")
                    }
                    parts.append(part)
                    _ = advance()
                }
                return .keyPath(parts)
            }
        case .symbol("{"):
            // Lists nest too (`{{{…`): held to the same depth as `!` and parentheses, or a
            // 1 KB condition overflows the stack (fuzzing found it).
            try enter()
            defer { nesting -= 1 }
            var values: [ConditionValue] = []
            if isSymbol(peek, "}") {
                _ = advance()
                return .literal(.list([]))
            }
            while true {
                guard case .literal(let value) = try parseOperand() else {
                    throw fail("a list holds values, not keys", at: tokens[position - 1])
                }
                values.append(value)
                if isSymbol(peek, ",") {
                    _ = advance()
                    continue
                }
                guard isSymbol(peek, "}") else { throw fail("expected ',' or '}' in list") }
                _ = advance()
                return .literal(.list(values))
            }
        default:
            throw fail("expected a key or a value, found \(describe(token))", at: token)
        }
    }

    private func describe(_ token: Token) -> String {
        switch token.kind {
        case .identifier(let name): return "'\(name)'"
        case .string(let text): return "'\(text)'"
        case .number(let text): return text
        case .symbol(let symbol): return "'\(symbol)'"
        case .end: return "end of condition"
        }
    }

    private static func tokenize(_ source: String) throws(ConditionSyntaxError) -> [Token] {
        var tokens: [Token] = []
        let characters = Array(source)
        var index = 0
        func error(_ message: String, _ column: Int) -> ConditionSyntaxError {
            ConditionSyntaxError(message: message, column: column, source: source)
        }
        while index < characters.count {
            let character = characters[index]
            let column = index + 1
            if character.isWhitespace {
                index += 1
                continue
            }
            if character == "'" || character == "\"" || character == "\u{2018}" || character == "\u{201C}" {
                let closing: Character =
                    switch character {
                    case "\u{2018}": "\u{2019}"
                    case "\u{201C}": "\u{201D}"
                    default: character
                    }
                var text = ""
                index += 1
                while index < characters.count, characters[index] != closing {
                    if characters[index] == "\\", index + 1 < characters.count {
                        index += 1
                    }
                    text.append(characters[index])
                    index += 1
                }
                guard index < characters.count else { throw error("unterminated string", column) }
                index += 1
                tokens.append(Token(kind: .string(text), column: column))
                continue
            }
            if character.isASCIIDigit
                || (character == "-" && index + 1 < characters.count && characters[index + 1].isASCIIDigit)
            {
                var end = index + 1
                while end < characters.count, characters[end].isASCIIDigit || characters[end] == "." { end += 1 }
                tokens.append(Token(kind: .number(String(characters[index..<end])), column: column))
                index = end
                continue
            }
            if character.isLetter || character == "_" || character == "$" || character == "@" {
                var end = index + 1
                while end < characters.count,
                    characters[end].isLetter || characters[end].isNumber || characters[end] == "_"
                {
                    end += 1
                }
                tokens.append(Token(kind: .identifier(String(characters[index..<end])), column: column))
                index = end
                continue
            }
            let pair = index + 1 < characters.count ? String(characters[index...index + 1]) : ""
            if ["==", "!=", "<>", "<=", ">=", "=<", "=>", "&&", "||"].contains(pair) {
                tokens.append(Token(kind: .symbol(pair), column: column))
                index += 2
                continue
            }
            if "=<>!(){},.[]".contains(character) {
                tokens.append(Token(kind: .symbol(String(character)), column: column))
                index += 1
                continue
            }
            if character == "&" || character == "|" {
                throw error("'\(character)' must be doubled: use '\(character)\(character)'", column)
            }
            throw error("unexpected character '\(character)'", column)
        }
        tokens.append(Token(kind: .end, column: characters.count + 1))
        return tokens
    }
}
