import ArgumentParser
import BreezeKit

/// `breeze`: author, check, serve and sync FreshAir content.
@main
struct Breeze: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "breeze",
        abstract: "Keep app content current from static hosting: sync, serve and check FreshAir bundles.",
        discussion: """
            Exit codes: 0 success (updated or already current, valid, nothing stale); 1 validate found errors, \
            hash --check found stale entries, or another failure; 64 usage; \
            69 server answered an error status; 75 network failure (try again); \
            65 content invalid (manifest, hash, size); 73 local store or folder problem; \
            78 configuration (credentials, endpoint, options).
            """,
        version: BreezeVersion.current,
        subcommands: [
            SyncCommand.self, ServeCommand.self, RollbackCommand.self, VerifyCommand.self,
            InitCommand.self, HashCommand.self, GenerateCommand.self, ValidateCommand.self, PlanCommand.self,
            KeygenCommand.self, KeysCommand.self, SignCommand.self, PublishCommand.self,
            PackageCommand.self, RepositoryCommand.self,
            WhatsNewCommand.self, CheckUpdateCommand.self, PreviewCommand.self, DemoCommand.self,
        ]
    )
}

extension Breeze {
    /// Runs the chosen command; a ``CommandFailure`` prints one line and exits with its code.
    static func main() async {
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch let failure as CommandFailure {
            failure.exit()
        } catch {
            exit(withError: error)
        }
    }
}
