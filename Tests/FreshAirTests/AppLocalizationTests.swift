import Testing

@testable import FreshAir

@Suite("The app's own localization, as Apple's preferredLocalizations picks it")
struct AppLocalizationTests {
    @Test(
        "The first preferred language the app has, exactly, then by language; else the development language",
        arguments: [
            (["en", "de"], ["fr-FR", "de-DE", "en"], "de"),
            (["en", "de"], ["fr-FR"], "en"),
            (["Base", "en", "pt-BR", "pt-PT"], ["pt-PT", "en"], "pt-PT"),
            (["en", "pt-BR"], ["pt-PT"], "pt-BR"),
            (["en", "zh-Hans", "zh-Hant"], ["zh-Hant-TW", "en"], "zh-Hant"),
            (["de", "en"], ["ja"], "en"),
        ]
    )
    func best(app: [String], preferred: [String], expected: String) {
        #expect(AppLocalization.best(app: app, preferred: preferred, development: "en") == expected)
    }

    @Test func noLocalizationsLeavesTheLocale() {
        #expect(AppLocalization.best(app: ["Base"], preferred: ["fr"], development: "en") == nil)
        #expect(AppLocalization.best(app: [], preferred: ["fr"], development: nil) == nil)
    }
}
