import ArgumentParser
import BreezeKit

/// The `Cache-Control` options `publish` stores with objects and `serve` sends.
struct CacheOptions: ParsableArguments {
    @Option(
        name: .customLong("cache-control-documents"),
        help: "Cache-Control for manifest.json, index.json and .sig files."
    )
    var documents = CachePolicy.defaultDocuments

    @Option(name: .customLong("cache-control-content"), help: "Cache-Control for every other file at a path.")
    var content = CachePolicy.defaultContent

    @Option(
        name: .customLong("cache-control-objects"),
        help: "Cache-Control for objects/<sha256> files (the object layout), which never change."
    )
    var immutable = CachePolicy.defaultImmutable

    var policy: CachePolicy { CachePolicy(documents: documents, content: content, immutable: immutable) }
}
