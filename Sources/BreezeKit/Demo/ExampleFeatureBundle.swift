package import Foundation
import FreshAir

/// The specification's release-notes example as a bundle, `TestFeature.freshair`: releases
/// 1.1 (systemVersion 8.0: apple_pay, calendar_integration, twitters_integration), 1.2 (8.2:
/// facebook_integration), 2.0 (8.2: new_major_feature, new_major_feature_2), 2.1 (8.0:
/// peek_pop), minimumVersion 1.2; titles and descriptions in English (UTF-8) and French
/// (UTF-16, as Xcode used to write them); one image per feature at 1x, 2x and 3x.
package enum ExampleFeatureBundle {
    package static let name = "TestFeature.freshair"

    package static let releases: [(version: String, systemVersion: String, features: [String])] = [
        ("1.1", "8.0", ["apple_pay", "calendar_integration", "twitters_integration"]),
        ("1.2", "8.2", ["facebook_integration"]),
        ("2.0", "8.2", ["new_major_feature", "new_major_feature_2"]),
        ("2.1", "8.0", ["peek_pop"]),
    ]

    static let english: [String: (String, String)] = [
        "apple_pay": ("Apple Pay", "Pay in one tap, without typing your card."),
        "calendar_integration": ("Calendar", "Events go straight to your calendar."),
        "twitters_integration": ("Twitter", "Share what you found with your followers."),
        "facebook_integration": ("Facebook", "Sign in with Facebook and find your friends."),
        "new_major_feature": ("A new home", "Everything you use most, on one screen."),
        "new_major_feature_2": ("Offline mode", "Keep working without a connection."),
        "peek_pop": ("Peek and Pop", "Press firmly to preview, press harder to open."),
    ]

    static let french: [String: (String, String)] = [
        "apple_pay": ("Apple Pay", "Payez d’un geste, sans saisir votre carte."),
        "calendar_integration": ("Calendrier", "Les événements vont droit dans votre calendrier."),
        "twitters_integration": ("Twitter", "Partagez vos trouvailles avec vos abonnés."),
        "facebook_integration": ("Facebook", "Connectez-vous avec Facebook et retrouvez vos amis."),
        "new_major_feature": ("Un nouvel accueil", "Tout ce que vous utilisez le plus, sur un seul écran."),
        "new_major_feature_2": ("Mode hors ligne", "Continuez sans connexion."),
        // peek_pop is left untranslated on purpose: French falls back to English for it.
    ]

    /// Writes the bundle into `parent` and returns its folder.
    @discardableResult
    package static func write(in parent: URL) throws -> URL {
        let bundle = parent.appendingPathComponent(name)
        let manager = FileManager.default
        for folder in ["en.lproj", "fr.lproj", "Resources"] {
            try manager.createDirectory(at: bundle.appendingPathComponent(folder), withIntermediateDirectories: true)
        }
        let releaseObjects: [[String: Any]] = releases.map { release in
            [
                "version": release.version, "features": release.features,
                "conditions": [["key": "systemVersion", "value": release.systemVersion]],
            ]
        }
        let notes: [String: Any] = [
            "minimumVersion": "1.2", "upgradeURL": "https://apps.example.com/app/id123", "releases": releaseObjects,
        ]
        try JSONSerialization.data(
            withJSONObject: notes,
            options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        )
        .write(to: bundle.appendingPathComponent("release_notes.json"))
        try Data(strings(english).utf8).write(to: bundle.appendingPathComponent("en.lproj/Feature.strings"))
        var utf16 = Data([0xFF, 0xFE])
        utf16.append(strings(french).data(using: .utf16LittleEndian)!)
        try utf16.write(to: bundle.appendingPathComponent("fr.lproj/Feature.strings"))
        for (index, key) in releases.flatMap(\.features).enumerated() {
            for scale in [1, 2, 3] {
                let suffix = scale == 1 ? "" : "@\(scale)x"
                try image(index: index, scale: scale).write(
                    to: bundle.appendingPathComponent("Resources/\(key)\(suffix).png")
                )
            }
        }
        return bundle
    }

    /// Writes one more image (a device- or scale-specific variant) for tests and authors.
    package static func writeImage(to url: URL, scale: Int = 2) throws {
        try image(index: 0, scale: scale).write(to: url)
    }

    static func strings(_ table: [String: (String, String)]) -> String {
        var text = "/* Feature texts: <key>.title and <key>.description. */\n"
        for key in table.keys.sorted() {
            let (title, description) = table[key]!
            text += "\"\(key).title\" = \"\(title)\";\n\"\(key).description\" = \"\(description)\";\n"
        }
        return text
    }

    /// A 48-point square at `scale`, a gradient in a colour of its own.
    static func image(index: Int, scale: Int) -> Data {
        let size = 48 * scale
        let hue = [
            (236, 95, 95), (72, 149, 239), (76, 201, 120), (247, 181, 56), (155, 93, 229), (38, 198, 218),
            (255, 122, 69),
        ][index % 7]
        return PNGImage.make(width: size, height: size) { x, y in
            let shade = Double(x + y) / Double(2 * size)
            return (
                UInt8(Double(hue.0) * (1 - shade * 0.5)), UInt8(Double(hue.1) * (1 - shade * 0.5)),
                UInt8(Double(hue.2) * (1 - shade * 0.5))
            )
        }
    }
}
