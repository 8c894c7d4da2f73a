import Foundation
package import FreshAir

/// Which devices get no variant of an image: `breeze validate` warns about each, as UIKit
/// would find no file for `UIImage(named:)` there.
///
/// A variant counts for an environment when its condition holds there or depends on keys the
/// environment does not set (a language, a channel: some device may match). The environments
/// are iPhone and iPad, plus every device a `~device` file name or a condition names, at 1x, 2x
/// and 3x. Asset catalogs are left to their own idiom rules.
package struct ImageCoverage {
    private var variants: [String: [(file: String, condition: Condition)]] = [:]
    private var devices: Set<String> = ["iphone", "ipad"]

    package init() {}

    /// Notes one listed file, at `path` in the bundle, selected by `condition`.
    package mutating func add(path: String, condition: Condition) {
        guard !path.contains(".xcassets/") else { return }
        let name = (path as NSString).lastPathComponent
        guard let image = ImageFileName(name) else { return }
        let folder = (path as NSString).deletingLastPathComponent
        variants[folder.isEmpty ? image.base : "\(folder)/\(image.base)", default: []].append((path, condition))
        if let device = image.device { devices.insert(device) }
        devices.formUnion(condition.values(comparedWith: "device"))
    }

    /// One line per image and environment that selects none of its variants.
    package func gaps() -> [(image: String, device: String, scale: Int)] {
        var gaps: [(image: String, device: String, scale: Int)] = []
        for image in variants.keys.sorted() {
            for device in devices.sorted() {
                for scale in 1...3 {
                    let environment = ConditionEnvironment([
                        "device": .string(device), "displayScale": .number(String(scale)),
                    ])
                    if variants[image]!.allSatisfy({ $0.condition.evaluate(knowing: environment) == false }) {
                        gaps.append((image, device, scale))
                    }
                }
            }
        }
        return gaps
    }
}
