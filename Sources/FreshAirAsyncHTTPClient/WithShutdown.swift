/// Runs `body` with `resource`, then shuts it down whether `body` returned or threw: the
/// transports' `withTransport`. A shutdown that fails after `body` threw is not reported over
/// `body`'s error.
func withShutdown<Resource, Result>(
    _ resource: Resource,
    shutdown: (Resource) async throws -> Void,
    _ body: (Resource) async throws -> Result
) async throws -> Result {
    let result: Result
    do {
        result = try await body(resource)
    } catch {
        try? await shutdown(resource)
        throw error
    }
    try await shutdown(resource)
    return result
}
