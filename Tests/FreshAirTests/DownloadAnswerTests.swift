import Foundation
import Testing

@testable import FreshAir

@Suite("A download's answer decides from the status and headers alone")
struct DownloadAnswerTests {
    let url = URL(string: "https://cdn.example/app/big.bin")!
    let stored = HTTPValidators(etag: nil, lastModified: "Wed, 25 Nov 2026 10:00:00 GMT")

    func job(conditional: Bool = false) -> DownloadJob {
        DownloadJob(
            label: "big.bin",
            url: url,
            partialPath: "/tmp/unused",
            expectedHash: nil,
            expectedSize: nil,
            limit: 1 << 30,
            validators: conditional ? stored : nil
        )
    }

    func head(_ status: Int, _ headers: [(String, String)] = []) -> HTTPResponseHead {
        HTTPResponseHead(status: status, headers: headers.map { (name: $0.0, value: $0.1) })
    }

    @Test func a304ProvesCurrentOnlyForAConditionalRequestNotResuming() {
        #expect(
            DownloadAnswer.decide(head(304), for: job(conditional: true), resumingAt: 0, validators: stored)
                == .notModified
        )
        // Nobody asked "has it changed?" for a file the manifest's digest covers.
        #expect(DownloadAnswer.decide(head(304), for: job(), resumingAt: 0, validators: nil) == .refused)
        // A resume sends no validators of the package's own, so a 304 answers nothing asked.
        #expect(
            DownloadAnswer.decide(head(304), for: job(conditional: true), resumingAt: 10, validators: nil) == .refused
        )
    }

    @Test func aWholeBodyStartsAtTheFirstByteEvenWhenAResumeWasAsked() {
        let answer = DownloadAnswer.decide(
            head(200, [("Content-Length", "4096")]),
            for: job(),
            resumingAt: 1000,
            validators: nil
        )
        #expect(answer == .body(offset: 0, total: 4096))
    }

    @Test func aDateOnlyValidatedBodyNoNewerThanOursIsSkipped() {
        let older = head(200, [("Last-Modified", "Wed, 25 Nov 2026 09:00:00 GMT"), ("Content-Length", "9")])
        #expect(
            DownloadAnswer.decide(older, for: job(conditional: true), resumingAt: 0, validators: stored)
                == .notNewer(serverLastModified: "Wed, 25 Nov 2026 09:00:00 GMT")
        )
        let newer = head(200, [("Last-Modified", "Wed, 25 Nov 2026 11:00:00 GMT"), ("Content-Length", "9")])
        #expect(
            DownloadAnswer.decide(newer, for: job(conditional: true), resumingAt: 0, validators: stored)
                == .body(offset: 0, total: 9)
        )
        // An ETag decides instead of the date: the body is taken.
        let tagged = HTTPValidators(etag: "\"v1\"", lastModified: stored.lastModified)
        #expect(
            DownloadAnswer.decide(older, for: job(conditional: true), resumingAt: 0, validators: tagged)
                == .body(offset: 0, total: 9)
        )
    }

    @Test func aRangeResumesOnlyWhereItWasAsked() {
        let exact = head(206, [("Content-Range", "bytes 1000-4095/4096")])
        #expect(
            DownloadAnswer.decide(exact, for: job(), resumingAt: 1000, validators: nil)
                == .body(offset: 1000, total: 4096)
        )
        let elsewhere = head(206, [("Content-Range", "bytes 0-4095/4096")])
        guard case .startOver = DownloadAnswer.decide(elsewhere, for: job(), resumingAt: 1000, validators: nil) else {
            Issue.record("a range starting elsewhere must not be appended")
            return
        }
        guard case .startOver = DownloadAnswer.decide(head(206), for: job(), resumingAt: 1000, validators: nil) else {
            Issue.record("a 206 without Content-Range must not be appended")
            return
        }
    }

    @Test func anEncodedRangeIsTheEncodingsFault() {
        let gzipped = head(206, [("Content-Range", "bytes 1000-4095/4096"), ("Content-Encoding", "gzip")])
        #expect(
            DownloadAnswer.decide(gzipped, for: job(), resumingAt: 1000, validators: nil)
                == .encodedRange(encoding: "gzip")
        )
        let identity = head(206, [("Content-Range", "bytes 1000-4095/4096"), ("Content-Encoding", "identity")])
        #expect(
            DownloadAnswer.decide(identity, for: job(), resumingAt: 1000, validators: nil)
                == .body(offset: 1000, total: 4096)
        )
    }

    @Test func unsatisfiableRangesStartOverAndErrorsAreRefused() {
        guard case .startOver = DownloadAnswer.decide(head(416), for: job(), resumingAt: 5000, validators: nil) else {
            Issue.record("416 must discard the partial file")
            return
        }
        for status in [301, 403, 404, 500, 503] {
            #expect(DownloadAnswer.decide(head(status), for: job(), resumingAt: 0, validators: nil) == .refused)
        }
    }
}
