import Crypto
import Foundation
import FreshAir

/// AWS credentials, read the way the AWS tools read them.
package struct S3Credentials: Sendable {
    package var accessKeyID: String
    package var secretAccessKey: String
    package var sessionToken: String?
    /// Where they came from, as errors name it: "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY",
    /// "the profile ci in ~/.aws/credentials".
    package var source: String

    package init(
        accessKeyID: String,
        secretAccessKey: String,
        sessionToken: String? = nil,
        source: String = "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"
    ) {
        self.accessKeyID = accessKeyID
        self.secretAccessKey = secretAccessKey
        self.sessionToken = sessionToken
        self.source = source
    }

    /// As the AWS CLI finds them: `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY` and, for
    /// temporary credentials, `AWS_SESSION_TOKEN`; else the static keys of `profile`'s
    /// section in the shared credentials and config files (see ``AWSProfile``).
    package static func fromEnvironment(
        _ environment: [String: String] = ProcessInfo.processInfo.environment,
        profile: AWSProfile? = nil
    ) throws -> S3Credentials {
        if let id = environment["AWS_ACCESS_KEY_ID"], !id.isEmpty, let secret = environment["AWS_SECRET_ACCESS_KEY"],
            !secret.isEmpty
        {
            return S3Credentials(
                accessKeyID: id,
                secretAccessKey: secret,
                sessionToken: environment["AWS_SESSION_TOKEN"]
            )
        }
        let profile = profile ?? AWSProfile.load(environment: environment)
        if let id = profile.accessKeyID, !id.isEmpty, let secret = profile.secretAccessKey, !secret.isEmpty {
            return S3Credentials(
                accessKeyID: id,
                secretAccessKey: secret,
                sessionToken: profile.sessionToken,
                source: "the profile \(profile.name) in \(profile.keysFile ?? "~/.aws/credentials")"
            )
        }
        if let source = profile.unsupportedSource {
            throw PublishError(
                "the AWS profile \(profile.name) gets its credentials through \(source), which breeze does not follow: "
                    + "export them first (`aws configure export-credentials --profile \(profile.name) --format env`)",
                kind: .configuration
            )
        }
        throw PublishError(
            "S3 needs credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN for temporary "
                + "ones), or give the profile \(profile.name) aws_access_key_id and aws_secret_access_key in "
                + "~/.aws/credentials (AWS_PROFILE or --profile names another)",
            kind: .configuration
        )
    }
}

/// Signs S3 requests with AWS Signature Version 4 (`AWS4-HMAC-SHA256`, header form).
///
/// Pure: the same request, time and credentials give the same `Authorization`, which the tests
/// check against the worked example in Amazon's S3 documentation.
struct S3RequestSigner: Sendable {
    var credentials: S3Credentials
    var region: String

    /// The SHA-256 of an empty body, for requests without one.
    static let emptyPayloadHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

    /// The headers to send: `headers` plus `x-amz-date`, `x-amz-content-sha256`, the session
    /// token when there is one, and `Authorization`. `host` must be among `headers`.
    func sign(
        method: String,
        path: String,
        query: [(String, String)],
        headers: [(String, String)],
        payloadHash: String,
        date: Date
    ) -> [(String, String)] {
        let (amzDate, day) = Self.timestamps(date)
        var all = headers.map { ($0.0.lowercased(), $0.1.trimmingCharacters(in: .whitespaces)) }
        all.append(("x-amz-date", amzDate))
        all.append(("x-amz-content-sha256", payloadHash))
        if let token = credentials.sessionToken { all.append(("x-amz-security-token", token)) }
        all.sort { $0.0 < $1.0 }

        let signedHeaders = all.map(\.0).joined(separator: ";")
        let canonicalRequest = [
            method,
            Self.encodePath(path),
            Self.canonicalQuery(query),
            all.map { "\($0.0):\($0.1)\n" }.joined(),
            signedHeaders,
            payloadHash,
        ].joined(separator: "\n")
        let scope = "\(day)/\(region)/s3/aws4_request"
        let stringToSign = [
            "AWS4-HMAC-SHA256", amzDate, scope, Self.hex(SHA256.hash(data: Data(canonicalRequest.utf8))),
        ].joined(separator: "\n")

        var key = SymmetricKey(data: Data("AWS4\(credentials.secretAccessKey)".utf8))
        for part in [day, region, "s3", "aws4_request"] {
            key = SymmetricKey(data: Data(HMAC<SHA256>.authenticationCode(for: Data(part.utf8), using: key)))
        }
        let signature = Self.hex(HMAC<SHA256>.authenticationCode(for: Data(stringToSign.utf8), using: key))
        all.append(
            (
                "authorization",
                "AWS4-HMAC-SHA256 Credential=\(credentials.accessKeyID)/\(scope),SignedHeaders=\(signedHeaders),Signature=\(signature)"
            )
        )
        return all
    }

    /// `20130524T000000Z` and `20130524`, in UTC.
    static func timestamps(_ date: Date) -> (amzDate: String, day: String) {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        let day = String(format: "%04d%02d%02d", c.year!, c.month!, c.day!)
        return (day + String(format: "T%02d%02d%02dZ", c.hour!, c.minute!, c.second!), day)
    }

    /// Percent-encodes all but the unreserved characters (and `/` in paths), as SigV4 requires.
    static func encode(_ text: String, keepingSlash: Bool) -> String {
        var result = ""
        for byte in text.utf8 {
            switch byte {
            case _ where URIBytes.isUnreserved(byte):
                result.unicodeScalars.append(Unicode.Scalar(byte))
            case UInt8(ascii: "/") where keepingSlash:
                result.append("/")
            default:
                result += String(format: "%%%02X", byte)
            }
        }
        return result
    }

    static func encodePath(_ path: String) -> String { encode(path, keepingSlash: true) }

    static func canonicalQuery(_ query: [(String, String)]) -> String {
        let encoded: [(name: String, value: String)] = query.map {
            (encode($0.0, keepingSlash: false), encode($0.1, keepingSlash: false))
        }
        let sorted = encoded.sorted { a, b in a.name == b.name ? a.value < b.value : a.name < b.name }
        return sorted.map { "\($0.name)=\($0.value)" }.joined(separator: "&")
    }

    static func hex(_ bytes: some Sequence<UInt8>) -> String { bytes.map { String(format: "%02x", $0) }.joined() }
}
