import Foundation

/// moto's S3 server (PyPI `moto[server]`, installed by scripts/test) on 127.0.0.1 at a free port,
/// with authentication on: every request after setup must carry a valid Signature Version 4 from
/// an access key the server issued, as on AWS. Setup (a user, a key, an allow-all policy, a
/// bucket) goes through boto3, the AWS SDK, in the server's first unauthenticated requests.
final class MotoS3: @unchecked Sendable {
    let port: Int
    let accessKeyID: String
    let secretAccessKey: String
    let bucket = "content"
    private let process: Process

    var endpoint: String { "http://127.0.0.1:\(port)" }

    init() async throws {
        guard let executable = Self.find("moto_server") else {
            throw TestSetupError("moto_server is not installed: run scripts/test, which installs moto[server] with pip")
        }
        port = try freeLoopbackPort()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = ["-H", "127.0.0.1", "-p", String(port)]
        var environment = ProcessInfo.processInfo.environment
        environment["INITIAL_NO_AUTH_ACTION_COUNT"] = "4"  // the four IAM calls below; then every request is checked
        process.environment = environment
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        self.process = process
        let deadline = Date().addingTimeInterval(20)
        while process.isRunning, !isListening(port: port), Date() < deadline {
            try await Task.sleep(for: .milliseconds(50))
        }
        guard isListening(port: port) else {
            process.stopNow()
            throw TestSetupError("moto_server did not start on port \(port)")
        }
        let setup = """
            import boto3, json
            ep = "http://127.0.0.1:\(port)"
            iam = boto3.client("iam", endpoint_url=ep, region_name="us-east-1", aws_access_key_id="setup", aws_secret_access_key="setup")
            iam.create_user(UserName="publisher")
            key = iam.create_access_key(UserName="publisher")["AccessKey"]
            policy = json.dumps({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*"}]})
            arn = iam.create_policy(PolicyName="publish", PolicyDocument=policy)["Policy"]["Arn"]
            iam.attach_user_policy(UserName="publisher", PolicyArn=arn)
            s3 = boto3.client("s3", endpoint_url=ep, region_name="us-east-1", aws_access_key_id=key["AccessKeyId"], aws_secret_access_key=key["SecretAccessKey"])
            s3.create_bucket(Bucket="\(bucket)")
            print(key["AccessKeyId"], key["SecretAccessKey"])
            """
        let folder = try TemporaryFolder("moto")
        try setup.write(to: folder.path("setup.py"), atomically: true, encoding: .utf8)
        let output: String
        do { output = try await shell("python3 setup.py", in: folder.url) } catch {
            process.stopNow()
            throw error
        }
        let words = output.split(whereSeparator: \.isWhitespace).suffix(2).map(String.init)
        accessKeyID = words.first ?? ""
        secretAccessKey = words.last ?? ""
    }

    /// The environment `breeze publish` reads credentials from.
    var credentials: [String: String] {
        ["AWS_ACCESS_KEY_ID": accessKeyID, "AWS_SECRET_ACCESS_KEY": secretAccessKey, "AWS_REGION": "us-east-1"]
    }

    func stop() {
        process.stopNow()  // SIGTERM would stay pending: see stopNow()
        process.waitUntilExit()
    }

    /// Starts a server, runs `body`, and stops it whatever happens.
    static func with(_ body: (MotoS3) async throws -> Void) async throws {
        let server = try await MotoS3()
        defer { server.stop() }
        try await body(server)
    }

    private static func find(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/\(name)" }.first {
            FileManager.default.isExecutableFile(atPath: $0)
        }
    }
}
