import Foundation
import FreshAir

enum UsingTheContent {
    static func lookups(
        content: FreshAirContent,
        appVersion: Version,
        promptStore: any UpdatePromptStore,
        policy: UpdatePromptPolicy
    ) throws {
        // snippet: lookups
        let live = content.live  // the live version, for this device's environment
        // Searched: the root, Resources/, pt-BR.lproj, pt_BR.lproj, pt.lproj, Base.lproj, en.lproj
        let video = live.url(forResource: "intro", withExtension: "mp4")
        // .strings (UTF-8 or UTF-16), then .xcstrings
        let title = live.localizedString(forKey: "welcome.title", table: "Feature")
        let image = live.imageURL(named: "apple_pay")  // apple_pay~ipad@2x.png on a 2x iPad, else the nearest scale

        let environment = content.environment
        let features = try live.whatsNewSinceLastSeen(current: appVersion, environment: environment, store: promptStore)
        let notes = try live.releaseNotes()!
        switch notes.updateStatus(current: appVersion, environment: environment) {
        case .required(let minimum, let url): print(minimum, url as Any)  // below minimumVersion: always shown
        case .available(let latest, let url) where policy.shouldPrompt(for: .available(latest, url: url)):
            print(latest)  // skip & interval rules
        default: break
        }
        let screen = try live.presentation()  // presentation.json as data
        // snippet: end
        _ = (video, title, image, features, screen)
    }
}
