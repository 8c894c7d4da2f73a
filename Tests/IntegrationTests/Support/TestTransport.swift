import FreshAirAsyncHTTPClient

/// One AsyncHTTPClient connection pool for the whole test run, never shut down. Tests that
/// are about ``URLSessionTransport`` (the library's default) say so; the others use this, as
/// `breeze` does.
let testTransport = AsyncHTTPClientTransport()
