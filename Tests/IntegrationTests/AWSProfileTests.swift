import BreezeKit
import Foundation
import Testing

@Suite("AWS shared config and credentials files, read as the AWS CLI reads them")
struct AWSProfileTests {
    let credentials = """
        [default]
        aws_access_key_id = AKIDEFAULT
        aws_secret_access_key = secret-default
        ; a comment
        [work]
        aws_access_key_id=AKIWORK
        aws_secret_access_key = secret = with equals
        aws_session_token = token
        """
    let config = """
        [default]
        region = eu-west-1
        [profile work]
        region = ap-southeast-2
        endpoint_url = https://minio.example.com
        s3 =
          addressing_style = path
        [profile sso]
        sso_start_url = https://example.awsapps.com/start
        [profile ceph]
        services = local-ceph
        endpoint_url = https://global.example.com
        [services local-ceph]
        s3 =
          endpoint_url = http://127.0.0.1:7480
        sts =
          endpoint_url = http://127.0.0.1:9999
        [profile keys-in-config]
        aws_access_key_id = AKICONFIG
        aws_secret_access_key = secret-config
        """

    @Test("The credentials file first, the config file's [profile NAME] for the rest")
    func profiles() {
        let work = AWSProfile.resolve(profile: "work", credentials: credentials, config: config)
        #expect(work.accessKeyID == "AKIWORK" && work.secretAccessKey == "secret = with equals")
        #expect(work.sessionToken == "token" && work.region == "ap-southeast-2")
        #expect(work.endpointURL == "https://minio.example.com" && work.unsupportedSource == nil)
        let fallback = AWSProfile.resolve(profile: "default", credentials: credentials, config: config)
        #expect(fallback.accessKeyID == "AKIDEFAULT" && fallback.region == "eu-west-1")
        let configOnly = AWSProfile.resolve(profile: "keys-in-config", credentials: credentials, config: config)
        #expect(configOnly.accessKeyID == "AKICONFIG" && configOnly.secretAccessKey == "secret-config")
        let sso = AWSProfile.resolve(profile: "sso", credentials: credentials, config: config)
        #expect(sso.accessKeyID == nil && sso.unsupportedSource == "sso_start_url")
        #expect(AWSProfile.resolve(profile: "none", credentials: "", config: "").accessKeyID == nil)
        // `services = NAME`: the s3 block of [services NAME], beside the profile's own endpoint_url.
        let ceph = AWSProfile.resolve(profile: "ceph", credentials: credentials, config: config)
        #expect(ceph.s3EndpointURL == "http://127.0.0.1:7480" && ceph.endpointURL == "https://global.example.com")
        #expect(work.s3EndpointURL == nil, "an s3 block in a profile is not a services section")
        // Where the keys came from, for errors.
        #expect(
            work.keysFile == "~/.aws/credentials" && configOnly.keysFile == "~/.aws/config" && sso.keysFile == nil
        )
    }

    @Test("Environment variables win over the files; AWS_PROFILE and the file locations are honoured")
    func order() throws {
        let home = try TemporaryFolder("aws-order")
        try Data(credentials.utf8).write(to: home.path("credentials"))
        try Data(config.utf8).write(to: home.path("config"))
        let files = [
            "AWS_SHARED_CREDENTIALS_FILE": home.path("credentials").path, "AWS_CONFIG_FILE": home.path("config").path,
        ]
        let fromProfile = try S3Credentials.fromEnvironment(files.merging(["AWS_PROFILE": "work"]) { $1 })
        #expect(fromProfile.accessKeyID == "AKIWORK")
        #expect(fromProfile.source == "the profile work in \(home.path("credentials").path)")
        let fromEnvironment = try S3Credentials.fromEnvironment(
            files.merging(["AWS_PROFILE": "work", "AWS_ACCESS_KEY_ID": "AKIENV", "AWS_SECRET_ACCESS_KEY": "s"]) { $1 }
        )
        #expect(fromEnvironment.accessKeyID == "AKIENV")
        #expect(fromEnvironment.source == "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY")
        #expect(throws: PublishError.self) {
            try S3Credentials.fromEnvironment(files.merging(["AWS_PROFILE": "sso"]) { $1 })
        }
    }
}

@Suite("An upload's rate and time left, as a progress line says them")
struct TransferEstimateTests {
    @Test("Rate from bytes over time; time left at that rate; nothing before half a second or the first byte")
    func estimates() {
        #expect(
            TransferProgress.estimate(done: 10_000_000, total: 30_000_000, elapsed: .seconds(2))
                == "5.0 MB/s, about 4 s left"
        )
        #expect(
            TransferProgress.estimate(done: 1 << 20, total: 301 << 20, elapsed: .seconds(1))
                == "1.0 MB/s, about 5 min left"
        )
        #expect(TransferProgress.estimate(done: 6_000_000, total: 6_000_000, elapsed: .seconds(3)) == "2.0 MB/s, done")
        #expect(
            TransferProgress.estimate(done: 1_000_000, total: 7_201_000_000, elapsed: .seconds(1))
                == "1.0 MB/s, about 2 h left"
        )
        #expect(TransferProgress.estimate(done: 5, total: 10, elapsed: .milliseconds(100)) == nil)
        #expect(TransferProgress.estimate(done: 0, total: 10, elapsed: .seconds(5)) == nil)
    }
}
