import Foundation
import Testing

@testable import FreshAir

@Suite("Redirects: followed within limits, never down to plain http")
struct HTTPRedirectTests {
    let origin = URL(string: "https://cdn.example.com/App.freshair/manifest.json")!

    @Test func relativeAndAbsoluteLocationsResolve() throws {
        #expect(
            try HTTPRedirect.target(of: "/v2/manifest.json", from: origin, visited: [origin]).absoluteString
                == "https://cdn.example.com/v2/manifest.json"
        )
        #expect(
            try HTTPRedirect.target(of: "https://mirror.example.org/m.json", from: origin, visited: [origin]).host
                == "mirror.example.org"
        )
    }

    @Test(
        "https to http, other schemes, loops and long chains are refused",
        arguments: [
            ("http://cdn.example.com/App.freshair/manifest.json", "from https to plain http"),
            ("file:///etc/passwd", "not an http(s) URL"),
            ("ftp://cdn.example.com/x", "not an http(s) URL"),
            ("https://cdn.example.com/App.freshair/manifest.json", "in a loop"),
        ]
    )
    func refused(location: String, reason: String) {
        #expect {
            try HTTPRedirect.target(of: location, from: origin, visited: [origin])
        } throws: { error in
            "\(error)".contains(reason)
        }
    }

    @Test("A long chain of distinct redirects is called a long chain, not a loop; every refusal is the server's to fix")
    func longChain() {
        let chain = (0...HTTPRedirect.limit).map { URL(string: "https://cdn.example.com/\($0)")! }
        #expect {
            try HTTPRedirect.target(of: "/next", from: origin, visited: chain)
        } throws: { error in
            guard let error = error as? TransportError, error.kind == .redirect else { return false }
            let failure = FreshAirError.transport(error)
            return "\(error)".contains("more than 5 times") && !"\(error)".contains("loop") && !failure.isTransient
                && "\(failure)".contains("redirect must change") && !"\(failure)".contains("Check the network")
        }
    }

    @Test func credentialsStayOnTheirHost() {
        let headers = [("Authorization", "Bearer secret"), ("If-None-Match", "\"a\""), ("cookie", "x=1")]
        let sameHost = HTTPRedirect.headers(headers, from: origin, to: URL(string: "https://cdn.example.com/other")!)
        #expect(sameHost.count == 3)
        let otherHost = HTTPRedirect.headers(
            headers,
            from: origin,
            to: URL(string: "https://mirror.example.org/other")!
        )
        #expect(otherHost.map(\.name) == ["If-None-Match"])
    }
}
