import Foundation
import FreshAir

/// The condition a file's place implies, as the old tool promised: `xx.lproj/` → language
/// (and region), `@2x`/`@3x` → `displayScale`, `~ipad`/`~iphone` → `device`, and for an
/// `.xcassets` image set, its `Contents.json` idiom and scale.
///
/// `Base.lproj` and the development language's folder get no language condition: they are
/// the fallback every device needs when its own language has no text.
enum ConditionInference {
    /// Clauses joined with `&&`, or `nil` when the file applies everywhere.
    static func condition(
        for path: String,
        siblings: Set<String>,
        assetInfo: AssetCatalog.ImageInfo?,
        developmentLanguage: String = "en"
    ) -> String? {
        var clauses: [String] = []
        let components = path.split(separator: "/").map(String.init)
        for folder in components.dropLast() where folder.hasSuffix(".lproj") {
            let name = String(folder.dropLast(6))
            guard name != "Base", name != developmentLanguage else { continue }
            let parts = name.split(whereSeparator: { $0 == "-" || $0 == "_" }).map(String.init)
            clauses.append("language == '\(parts[0])'")
            if let region = parts.dropFirst().last(where: { $0.count == 2 }) { clauses.append("region == '\(region)'") }
        }
        if let assetInfo {
            if let idiom = assetInfo.idiom, idiom != "universal" { clauses.append("device == '\(idiom)'") }
            if let scale = assetInfo.scale { clauses += scaleClauses(scale, available: assetInfo.scalesInSet) }
            return clauses.isEmpty ? nil : clauses.joined(separator: " && ")
        }
        guard let image = ImageFileName(components.last ?? "") else {
            return clauses.isEmpty ? nil : clauses.joined(separator: " && ")
        }
        let folder = components.dropLast().joined(separator: "/")
        /// Whether the folder has this image for `device` at `scale`, under either spelling.
        func sibling(device: String?, scale: Int) -> Bool {
            image.variants(device: device, scale: scale).contains {
                siblings.contains(folder.isEmpty ? $0 : "\(folder)/\($0)")
            }
        }
        if let device = image.device {
            clauses.append("device == '\(device)'")
        } else if ["ipad", "iphone"].contains(where: { sibling(device: $0, scale: image.scale) }) {
            // The plain file is for every device that has no variant of its own.
            for device in ["ipad", "iphone"] where sibling(device: device, scale: image.scale) {
                clauses.append("device != '\(device)'")
            }
        }
        let scales = Set([1, 2, 3].filter { $0 == image.scale || sibling(device: image.device, scale: $0) })
        clauses += scaleClauses(image.scale, available: scales)
        return clauses.isEmpty ? nil : clauses.joined(separator: " && ")
    }

    /// The scales an image at `scale` serves, as UIKit's lookup falls back: from its own up to
    /// the next one there is (a 3x screen gets the @2x image when there is no @3x), and below its
    /// own when it is the smallest there is. `hero.png` and `hero@2x.png` give `displayScale < 2`
    /// and `displayScale >= 2`; with `hero@3x.png` too, `@2x` is `>= 2 && < 3`.
    static func scaleClauses(_ scale: Int, available: Set<Int>) -> [String] {
        var clauses: [String] = []
        if let smallest = available.min(), scale > smallest { clauses.append("displayScale >= \(scale)") }
        if let next = available.filter({ $0 > scale }).min() { clauses.append("displayScale < \(next)") }
        return clauses
    }
}

/// An `.xcassets` catalog's image sets: which file is for which idiom and scale.
enum AssetCatalog {
    struct ImageInfo {
        var idiom: String?
        var scale: Int?
        /// The scales the image set has for this idiom, this one's included.
        var scalesInSet: Set<Int> = []
    }

    /// Image files inside `*.imageset/` folders, keyed by bundle path.
    static func imageInfo(in bundle: URL, files: [String]) -> [String: ImageInfo] {
        var result: [String: ImageInfo] = [:]
        for contents in files where contents.hasSuffix(".imageset/Contents.json") {
            let folder = String(contents.dropLast("/Contents.json".count))
            guard let data = try? Data(contentsOf: bundle.appendingPathComponent(contents)),
                let images = (try? JSONReader.parse(data))?["images"]?.array
            else { continue }
            var set: [String: ImageInfo] = [:]
            for image in images {
                guard let filename = image["filename"]?.string else { continue }
                let scale = image["scale"]?.string.flatMap { Int($0.dropLast()) }
                set["\(folder)/\(filename)"] = ImageInfo(idiom: image["idiom"]?.string, scale: scale)
            }
            for (path, info) in set {
                var info = info
                info.scalesInSet = Set(set.values.filter { $0.idiom == info.idiom }.compactMap(\.scale))
                result[path] = info
            }
        }
        return result
    }
}
