import Foundation
import Testing

/// The release tarball on a system without Swift: a root file system made of exactly the
/// libraries `ldd` names for the binary (and bash's, for the completion), plus CA
/// certificates, and nothing else. Inside it, `breeze --version`, a signed sync from nginx on
/// the host (the tarball itself, as a package: breeze upgrading breeze), `breeze verify` and the
/// bash completion all work.
///
/// Runs when `FRESHAIR_RELEASE_TARBALL` names a tarball from `scripts/release --throwaway-key`
/// (.ci/run builds one), as root (for `chroot`).
@Suite("The release tarball installs and syncs on a system without Swift")
struct ReleaseTarballTests {
    static let tarball = ProcessInfo.processInfo.environment["FRESHAIR_RELEASE_TARBALL"].map {
        URL(fileURLWithPath: $0)
    }

    /// Copies `binary` and every library `ldd` names for it into `root`, at the same paths.
    func copyWithLibraries(_ binary: String, into root: URL) async throws {
        let listed = try await shell("ldd '\(binary)'", in: root)
        let libraries = listed.split(separator: "\n").compactMap { line -> String? in
            line.split(whereSeparator: \.isWhitespace).first { $0.hasPrefix("/") }.map(String.init)
        }
        for path in libraries + (binary.hasPrefix(root.path) ? [] : [binary]) {
            try await shell("cp --parents -L '\(path)' '\(root.path)'", in: root)
        }
    }

    @Test(.enabled(if: tarball != nil && getuid() == 0, "set by .ci/run, which builds the release tarball"))
    func installsWithoutSwift() async throws {
        let tarball = try #require(Self.tarball)
        let dist = tarball.deletingLastPathComponent()
        let key = try String(contentsOf: dist.appendingPathComponent("throwaway-key.pub"), encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let work = try TemporaryFolder("release-root")
        let root = work.path("root")
        try FileManager.default.createDirectory(
            at: root.appendingPathComponent("opt"),
            withIntermediateDirectories: true
        )
        try await shell("tar -xzf '\(tarball.path)' -C '\(root.path)/opt'", in: work.url)
        let folder = try #require(try FileManager.default.contentsOfDirectory(atPath: root.path + "/opt").first)
        let breeze = "/opt/\(folder)/bin/breeze"
        try await copyWithLibraries(root.path + breeze, into: root)  // the libraries; the binary is there already
        try await copyWithLibraries("/bin/bash", into: root)
        try await shell(
            "mkdir -p '\(root.path)/etc/ssl/certs' '\(root.path)/tmp' && cp -L /etc/ssl/certs/ca-certificates.crt '\(root.path)/etc/ssl/certs/'",
            in: work.url
        )
        // No Swift anywhere in the root: the runtime is linked into the binary.
        let swift = try await shell(
            "find '\(root.path)' -name 'libswift*' -o -name 'libFoundation*' | wc -l",
            in: work.url
        )
        #expect(swift.trimmingCharacters(in: .whitespacesAndNewlines) == "0")
        // What README promises: glibc, libstdc++ and zlib; no libcurl (the release build leaves
        // FreshAir's URLSession out and syncs through AsyncHTTPClient).
        let needed = try await shell("ldd '\(root.path + breeze)' | awk '{print $1}' | sort", in: work.url)
        let allowed = ["ld-linux", "libc.so", "libm.so", "libstdc++", "libgcc_s", "libz.so", "linux-vdso"]
        let unexpected = needed.split(separator: "\n").filter { name in !allowed.contains { name.contains($0) } }
        #expect(unexpected.isEmpty, "libraries README does not name: \(unexpected)")
        // What any Linux system has mounted: the Swift runtime reads its arguments from /proc.
        try await shell(
            "mkdir -p '\(root.path)/proc' '\(root.path)/dev' && mount -t proc proc '\(root.path)/proc' && mount --bind /dev '\(root.path)/dev'",
            in: work.url
        )
        defer {
            _ = try? Process.run(URL(fileURLWithPath: "/bin/umount"), arguments: [root.path + "/proc"]).waitUntilExit()
            _ = try? Process.run(URL(fileURLWithPath: "/bin/umount"), arguments: [root.path + "/dev"]).waitUntilExit()
        }
        func inside(_ command: String) async throws -> String {
            try await shell("chroot '\(root.path)' /bin/bash -c '\(command)'", in: work.url)
        }

        let version = try await inside("\(breeze) --version")
        #expect(folder.hasPrefix("breeze-\(version.trimmingCharacters(in: .whitespacesAndNewlines))-"))

        // breeze upgrading breeze: the signed tarball, served by nginx on the host, as a package.
        let served = work.path("served")
        try FileManager.default.createDirectory(at: served, withIntermediateDirectories: true)
        for name in [tarball.lastPathComponent, tarball.lastPathComponent + ".sig"] {
            try FileManager.default.copyItem(
                at: dist.appendingPathComponent(name),
                to: served.appendingPathComponent(name)
            )
        }
        let nginx = try Nginx(serving: served)
        defer { nginx.stop() }
        let url = nginx.url.appendingPathComponent(tarball.lastPathComponent).absoluteString
        let synced = try await inside("\(breeze) sync \(url) /upgrade --trusted-key \(key)")
        #expect(synced.hasPrefix("Installed package version 1"), "\(synced)")
        // The live link is absolute inside the root: the installed breeze is run from there.
        #expect(try await inside("/upgrade/\(folder)/bin/breeze --version") == version)
        let verified = try await inside("\(breeze) verify /upgrade")
        #expect(verified.hasPrefix("Version 1 is intact"), "\(verified)")
        let again = try await inside("\(breeze) sync \(url) /upgrade --trusted-key \(key)")
        #expect(again.hasPrefix("Package current (304 Not Modified)"), "\(again)")

        // The bash completion offers subcommands.
        let completion = try await inside(
            "source /opt/\(folder)/share/bash-completion/completions/breeze; COMP_WORDS=(breeze sy); COMP_CWORD=1; "
                + "_breeze; echo \"${COMPREPLY[@]}\""
        )
        #expect(
            completion.split(separator: " ").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }.contains(
                "sync"
            ),
            "\(completion)"
        )
        // `breeze help <TAB>` offers the commands too (argument-parser's own help offers none).
        let help = try await inside(
            "source /opt/\(folder)/share/bash-completion/completions/breeze; COMP_WORDS=(breeze help re); COMP_CWORD=2; "
                + "_breeze breeze re help; echo \"${COMPREPLY[@]}\""
        )
        #expect(help.trimmingCharacters(in: .whitespacesAndNewlines) == "repo release revert", "\(help)")
    }
}
