package import Foundation
import FreshAir

/// `breeze init`: a starter bundle that validates, to copy from: a manifest with digests,
/// release notes with one feature, its title and description in English and French, and its
/// image at 1x, 2x and 3x (each with the conditions `breeze generate` infers).
package enum BundleStarter {
    /// Writes the starter into `bundle`, a new or empty folder: an author's files are never
    /// overwritten (a folder that holds anything is refused before a byte is written).
    package static func write(to bundle: URL) async throws -> ManifestGenerator.Report {
        let manager = FileManager.default
        if manager.fileExists(atPath: bundle.appendingPathComponent("manifest.json").path) {
            throw PackagingError(
                "\(bundle.path) already has a manifest.json; `breeze generate` updates it",
                kind: .exists
            )
        }
        if let existing = try? manager.contentsOfDirectory(atPath: bundle.path), !existing.isEmpty {
            throw PublishError(
                "\(bundle.path) is not empty (it holds \(existing.sorted().prefix(3).joined(separator: ", "))"
                    + "\(existing.count > 3 ? ", …" : "")); `breeze init` writes its starter only into a new or empty "
                    + "folder, so that none of your files is replaced. For a folder of your own content, "
                    + "`breeze generate \(bundle.path)` writes its manifest",
                kind: .local
            )
        }
        for folder in ["en.lproj", "fr.lproj", "Resources"] {
            try manager.createDirectory(at: bundle.appendingPathComponent(folder), withIntermediateDirectories: true)
        }
        let notes = """
            {
              "minimumVersion": "1.0",
              "upgradeURL": "https://apps.example.com/your-app",
              "releases": [
                {"version": "1.0", "features": ["welcome"]}
              ]
            }

            """
        try Data(notes.utf8).write(to: bundle.appendingPathComponent("release_notes.json"))
        try Data("\"welcome.title\" = \"Welcome\";\n\"welcome.description\" = \"Content that updates itself.\";\n".utf8)
            .write(to: bundle.appendingPathComponent("en.lproj/Feature.strings"))
        try Data(
            "\"welcome.title\" = \"Bienvenue\";\n\"welcome.description\" = \"Un contenu qui se met à jour tout seul.\";\n"
                .utf8
        )
        .write(to: bundle.appendingPathComponent("fr.lproj/Feature.strings"))
        for scale in [1, 2, 3] {
            let name = scale == 1 ? "welcome.png" : "welcome@\(scale)x.png"
            try ExampleFeatureBundle.writeImage(to: bundle.appendingPathComponent("Resources/\(name)"), scale: scale)
        }
        return try await ManifestGenerator.run(bundle: bundle)
    }
}
