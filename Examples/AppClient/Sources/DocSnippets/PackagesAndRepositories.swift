import Foundation
import FreshAir

enum PackagesAndRepositories {
    static func all(content: FreshAirContent, package: PackageUpdater, level1: Repository) async throws {
        // snippet: updaters
        let updaters: [any ContentUpdater] = [content, package, level1]
        for updater in updaters { print(try await updater.run().oneLine) }
        // snippet: end
    }

    static func modes(appSupport: URL) async throws {
        // snippet: modes
        // One archive at a fixed URL, with the copy the app ships (Fresh): `content.tgz` (and its
        // `.meta`) in the app's resources; the store in Application Support/FreshAir/content.
        let package = FreshAirContent(remote: URL(string: "https://s3.amazonaws.com/my-bucket/content.tgz")!)
        try await package.run()  // 304: one request, no body. Offline first launch: the bundled copy.
        let folder = package.store.liveLink  // the unpacked files; `package.live` looks them up

        // The same with every part named: its store, its bundled file.
        let explicit = PackageUpdater(
            remote: URL(string: "https://s3.amazonaws.com/my-bucket/content.tgz")!,
            store: BundleStore(root: appSupport.appendingPathComponent("content.store")),
            bundledPackage: Bundle.main.url(forResource: "content", withExtension: "tgz")
        )

        // Versioned bundles in repositories (Asset Distribution Manager); as many as you like, each
        // in Application Support/FreshAir/<id> (out of backups), its state apart, unless given a directory.
        let level1 = Repository(source: URL(string: "https://cdn.example.com/")!, id: "com.adm.level1")
        try await level1.run()  // index.json conditionally; only bundles whose version changed
        let dogs = Repository.bundle(descriptor: "com.adm.level1.dogs", in: [level1])
        let installed = level1.installedBundles  // ["cats": 1, "dogs": 3]: what to list
        // snippet: end
        _ = (folder, explicit, dogs, installed)
    }

    @MainActor
    static func model(level1: Repository) async {
        // snippet: repositoryModel
        // For SwiftUI: `@State private var levels = RepositoryModel(level1)`.
        let levels = RepositoryModel(level1)
        await levels.refresh()  // never throws: `levels.phase` is .current or .failed
        let names = levels.bundles.keys.sorted()  // a new value after each update: views redraw
        let forest = levels.folder(ofBundle: "forest")  // nil until installed
        // snippet: end
        _ = (names, forest)
    }
}
