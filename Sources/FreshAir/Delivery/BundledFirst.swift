/// The one rule for a copy the app ships, for every mode that has one: install it first when
/// it should be (a copy that fails its checks is passed over, so that it never keeps the
/// server's content out), then ask the server; and when the bundled copy went live but the
/// server could not be asked, say so (``FreshAirError/Code/bundledCopyOnly``) rather than fail
/// as if nothing were installed.
enum BundledFirst {
    static func run<Result>(
        installBundled: () async throws -> Bool,
        thenServer: () async throws -> Result
    ) async throws -> (result: Result, installedBundled: Bool) {
        let installed = (try? await installBundled()) ?? false
        do {
            return (try await thenServer(), installed)
        } catch let error as FreshAirError where installed {
            throw FreshAirError.bundledCopyOnly(error)
        }
    }
}
