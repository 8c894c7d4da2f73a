import Foundation
import FreshAir

enum TestingWithALocalServer {
    static func fixture(resources: Bundle, temporaryFolder: URL) async throws {
        // snippet: fixture
        let content = FreshAirContent(
            remote: resources.url(forResource: "App", withExtension: "freshair")!,  // a file:// bundle folder
            folder: temporaryFolder,
            bundledIn: nil
        )
        try await content.run()
        // snippet: end
    }
}
