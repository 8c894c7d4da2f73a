import Foundation
import Testing

@testable import FreshAir

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite("URLSession's errors in words a developer can act on")
struct URLErrorWordsTests {
    let url = URL(string: "http://192.168.1.20:8080/App.freshair/manifest.json")!

    func words(_ code: URLError.Code) -> TransportError? {
        URLSessionTransport.translate(URLError(code), url: url, headTimedOut: false) as? TransportError
    }

    @Test("-1022: App Transport Security names the Info.plist keys a development server needs")
    func appTransportSecurity() {
        let error = words(.appTransportSecurityRequiresSecureConnection)
        #expect(error?.kind == .connect)
        #expect(error?.description.contains("NSAllowsLocalNetworking") == true)
        #expect(error?.description.contains("NSLocalNetworkUsageDescription") == true)
        #expect(error?.underlying is URLError, "the URLError is kept for code that looks deeper")
    }

    @Test("No bare error numbers: an unknown failure is an interrupted transfer, the rest say what failed")
    func noBareNumbers() {
        #expect(words(.unknown)?.kind == .interrupted)
        let other = words(.userAuthenticationRequired)?.description ?? ""
        #expect(other.contains("the request failed: ") && !other.hasSuffix("URLError -1013"), "\(other)")
    }
}
