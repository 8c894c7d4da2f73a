/// Limits and policies shared by every delivery mode.
public struct SyncConfiguration: Sendable {
    /// Files downloaded at once.
    public var concurrency: Int = 8
    public var retry = RetryPolicy()
    /// Headers sent with every request (authorization, a user agent).
    public var headers: [(name: String, value: String)] = []
    /// The longest wait for a response head.
    public var requestTimeout: Duration = .seconds(30)
    /// A manifest or index larger than this is refused.
    public var maxDocumentSize: Int = 32 << 20
    /// A file or package larger than this is refused, whatever its manifest says.
    public var maxFileSize: Int64 = 8 << 30
    /// How deep child manifests may nest.
    public var maxManifestDepth: Int = 8
    /// Ed25519 keys the app pins. When set, a bundle's root manifest must be signed by one
    /// of them (`breeze sign`) and every entry must carry a digest; anything else is refused
    /// and the installed content stays. Empty (the default): manifests are not checked.
    public var trustedKeys: [TrustedKey] = []

    public init() {}
}
