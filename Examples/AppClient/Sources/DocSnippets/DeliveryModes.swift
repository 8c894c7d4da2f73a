import Foundation
import FreshAir

enum DeliveryModes {
    static func mirrors() -> FreshAirContent {
        // snippet: mirrors
        var content = FreshAirContent(remote: URL(string: "https://cdn-a.example.com/App.freshair/")!)
        content.mirrors = [URL(string: "https://cdn-b.example.com/App.freshair/")!]
        // snippet: end
        return content
    }
}
