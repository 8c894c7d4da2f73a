import Foundation
import FreshAir

enum UsingTheContent {
    static func lookups(content: FreshAirContent, appVersion: Version, lastSeen: Version?) throws {
        // snippet: lookups
        let live = content.live  // the live version, for this device's environment
        // Searched: the root, Resources/, pt-BR.lproj, pt_BR.lproj, pt.lproj, Base.lproj, en.lproj
        let video = live.url(forResource: "intro", withExtension: "mp4")
        // .strings (UTF-8 or UTF-16), then .xcstrings
        let title = live.localizedString(forKey: "welcome.title", table: "Feature")
        let image = live.image(named: "apple_pay")  // apple_pay~ipad@2x.png on a 2x iPad, else the nearest scale
        // image?.scale is 2: image?.uiImage() (Apple platforms) draws it at 2 pixels a point

        let notes = try live.releaseNotes()  // release_notes.json, the old schema's quirks accepted
        let status = notes?.updateStatus(current: appVersion, environment: content.environment)
        let features = try live.whatsNew(from: lastSeen, to: appVersion, environment: content.environment)
        let screen = try live.presentation()  // presentation.json as JSON bytes, for your Decodable
        // snippet: end
        _ = (video, title, image, status, features, screen)
    }

    @MainActor
    static func prompts(model: ContentModel, showUpdatePrompt: () -> Bool) {
        // snippet: prompts
        if model.shouldPromptForUpdate {  // required: always; available: not skipped, not asked for 3 days
            let skipped = showUpdatePrompt()
            if skipped { model.skipAvailableUpdate() } else { model.updatePromptShown() }
        }
        // snippet: end
    }
}
