import Foundation

/// A dotted version number that compares the way people read versions.
///
/// `8.10 > 8.4`, `1.2 == 1.2.0`, and a pre-release suffix sorts before the release
/// (`2.0-beta1 < 2.0`). Used for `appVersion`, `systemVersion`, release notes and any
/// condition whose two sides both look like versions.
public struct Version: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The numeric components, most significant first (`[1, 2, 3]` for `1.2.3`).
    public let components: [Int]
    /// Anything after the numbers (`"-beta1"`, `"b2"`); empty for a release.
    public let suffix: String

    /// Parses `"1.2.3"`, `"v2.0"`, `"2.0-beta1"`. Returns `nil` when the text does not start
    /// with a number.
    public init?(_ text: String) {
        var rest = Substring(text.trimmingCharacters(in: .whitespaces))
        if rest.first == "v" || rest.first == "V" { rest = rest.dropFirst() }
        var components: [Int] = []
        while true {
            let digits = rest.prefix(while: \.isASCIIDigit)
            guard !digits.isEmpty, let value = Int(digits) else { break }
            components.append(value)
            rest = rest.dropFirst(digits.count)
            // A dot continues the number only when a digit follows it.
            guard rest.first == ".", rest.dropFirst().first?.isASCIIDigit == true else { break }
            rest = rest.dropFirst()
        }
        guard !components.isEmpty else { return nil }
        self.components = components
        self.suffix = String(rest)
    }

    /// A version made of numeric components.
    public init(_ components: Int..., suffix: String = "") {
        self.components = components
        self.suffix = suffix
    }

    /// `true` when the whole text is numbers and dots (no suffix): the strict form used to
    /// decide whether a condition compares versions.
    public var isPlainNumber: Bool { suffix.isEmpty }

    public var description: String {
        components.map(String.init).joined(separator: ".") + suffix
    }

    public static func == (lhs: Version, rhs: Version) -> Bool {
        compare(lhs, rhs) == 0
    }

    public func hash(into hasher: inout Hasher) {
        // Trailing zeros do not change a version: 1.2 and 1.2.0 hash alike.
        var trimmed = components
        while trimmed.count > 1, trimmed.last == 0 { trimmed.removeLast() }
        hasher.combine(trimmed)
        hasher.combine(suffix)
    }

    public static func < (lhs: Version, rhs: Version) -> Bool {
        compare(lhs, rhs) < 0
    }

    private static func compare(_ lhs: Version, _ rhs: Version) -> Int {
        let count = max(lhs.components.count, rhs.components.count)
        for index in 0..<count {
            let left = index < lhs.components.count ? lhs.components[index] : 0
            let right = index < rhs.components.count ? rhs.components[index] : 0
            if left != right { return left < right ? -1 : 1 }
        }
        // A release sorts after its pre-releases; pre-releases sort by text.
        switch (lhs.suffix.isEmpty, rhs.suffix.isEmpty) {
        case (true, true): return 0
        case (true, false): return 1
        case (false, true): return -1
        case (false, false): return lhs.suffix == rhs.suffix ? 0 : (lhs.suffix < rhs.suffix ? -1 : 1)
        }
    }
}

extension Version: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        // Release notes write versions as strings ("1.2") or, carelessly, as numbers (1.2).
        let text: String
        if let string = try? container.decode(String.self) {
            text = string
        } else {
            text = String(try container.decode(Double.self))
        }
        guard let parsed = Version(text) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "not a version: \"\(text)\"")
        }
        self = parsed
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}

extension Character {
    var isASCIIDigit: Bool { isASCII && isNumber }
}
