import Foundation
import FreshAir

enum SigningAndKeys {
    static func pin(url: URL, shippedKeys: Data) throws {
        // snippet: pin
        var configuration = SyncConfiguration()
        configuration.trustedKeys = [try TrustedKey(base64: "+fH/zv4NbjKHmyNmi1gsVbO0aZcyZsup1nL6ZY4FWms=")]
        configuration.minimumSequence = 12  // optional: what was current when this app shipped
        let content = FreshAirContent(remote: url, configuration: configuration)
        // snippet: end
        _ = content
    }

    static func rotation(shippedKeys: Data) throws {
        var configuration = SyncConfiguration()
        // snippet: rotation
        configuration.keyRotation = try KeyRotation(
            pinned: shippedKeys,  // the bytes of keys/1.json, shipped in the app
            updates: URL(string: "https://cdn.example.com/keys/")!
        )
        // snippet: end
    }
}
