import FreshAir
import Testing

@Suite("Conditions: one language, one evaluator")
struct ConditionTests {
    let device: ConditionEnvironment = {
        var environment = ConditionEnvironment()
        environment["platform"] = "iOS"
        environment["systemVersion"] = "8.10"
        environment["appVersion"] = "0.9"
        environment["displayScale"] = 2
        environment["device"] = "ipad"
        environment["locale"] = "pt_BR"
        environment["defaults"] = ["betaEnabled": true, "tier": "gold"]
        return environment
    }()

    func holds(_ text: String) throws -> Bool {
        try Condition(parsing: text).evaluate(in: device)
    }

    @Test func theSpecificationsExample() throws {
        #expect(try holds("platform == 'iOS' && systemVersion > 8.4 && appVersion < 1.0"))
        #expect(try !holds("platform == 'iOS' && systemVersion > 8.4 && appVersion > 1.0"))
    }

    @Test func versionsCompareAsVersionsNotAsDecimals() throws {
        #expect(try holds("systemVersion > 8.4"))  // 8.10 > 8.4, though 8.10 < 8.4 as decimals
        #expect(try holds("systemVersion >= 8.10.0"))
        #expect(try holds("appVersion == 0.9.0"))
        #expect(try holds("displayScale == 2.0"))
    }

    @Test func booleanOperatorsInBothSpellingsWithPrecedence() throws {
        #expect(try holds("platform == 'Android' || device == 'ipad' && displayScale >= 2"))
        #expect(try !holds("(platform == 'Android' || device == 'ipad') && displayScale >= 3"))
        #expect(try holds("NOT platform == 'Android' AND device = \"ipad\""))
        #expect(try holds("!(appVersion >= 1.0)"))
        #expect(try holds("TRUEPREDICATE"))
        #expect(try !holds("FALSEPREDICATE OR false"))
    }

    @Test func setsStringsAndModifiers() throws {
        #expect(try holds("language IN {'pt', 'es'}"))
        #expect(try holds("region NOT IN {'US', 'GB'}"))
        #expect(try holds("locale BEGINSWITH 'pt'"))
        #expect(try holds("locale ENDSWITH 'BR'"))
        #expect(try holds("platform ==[c] 'IOS'"))
        #expect(try !holds("platform == 'IOS'"))
        #expect(try holds("device CONTAINS[c] 'PA'"))
    }

    @Test func keyPathsAndBareBooleans() throws {
        #expect(try holds("defaults.betaEnabled"))
        #expect(try holds("defaults.betaEnabled == YES"))
        #expect(try holds("defaults.tier == 'gold'"))
        #expect(try !holds("defaults.missing"))
    }

    @Test func anUnknownKeyIsFalseNotACrash() throws {
        #expect(try !holds("channel == 'beta'"))
        #expect(try !holds("channel != 'beta'"))
        #expect(try holds("!(channel == 'beta')"))
        #expect(try !holds("nested.deeper.key > 3"))
    }

    @Test("Before a device is known: false only where every device with these keys says false")
    func partialEvaluation() throws {
        let iOS = ConditionEnvironment(["platform": "iOS"])
        func partial(_ text: String) throws -> Bool? { try Condition(parsing: text).evaluate(knowing: iOS) }
        #expect(try partial("platform != 'iOS'") == false)
        #expect(try partial("platform == 'iOS'") == true)
        #expect(try partial("appVersion > 1.0") == nil)  // depends on the app, not known yet
        #expect(try partial("platform != 'iOS' && appVersion > 1.0") == false)
        #expect(try partial("platform == 'iOS' || appVersion > 1.0") == true)
        #expect(try partial("platform == 'tvOS' || appVersion > 1.0") == nil)
        #expect(try partial("NOT (platform IN {'iOS', 'tvOS'})") == false)
        #expect(
            try Condition(parsing: "platform IN {'iOS', 'tvOS'} || platform == 'macOS' || appVersion > 1")
                .values(comparedWith: "platform") == ["iOS", "tvOS", "macOS"]
        )
    }

    @Test func jsonFormCompilesToTheSameTree() throws {
        let json = Condition(requirements: [
            (key: "platform", value: "iOS", comparison: .equal),
            (key: "systemVersion", value: "8.4", comparison: .greater),
            (key: "appVersion", value: "1.0", comparison: .less),
        ])
        let text = try Condition(parsing: "platform == 'iOS' && systemVersion > '8.4' && appVersion < '1.0'")
        #expect(json == text)
        #expect(json.evaluate(in: device))
    }

    @Test(arguments: [
        ("platform == ", 13, "expected a key or a value"),
        ("(platform == 'iOS'", 19, "expected ')'"),
        ("platform == 'iOS", 13, "unterminated string"),
        ("platform & 'iOS'", 10, "must be doubled"),
        ("platform == 'iOS' appVersion", 19, "unexpected"),
        ("a ==[x] 'b'", 6, "unknown comparison option"),
        ("", 1, "empty condition"),
    ])
    func syntaxErrorsNameTheColumn(source: String, column: Int, message: String) {
        #expect {
            _ = try Condition(parsing: source)
        } throws: { error in
            guard let error = error as? ConditionSyntaxError else { return false }
            return error.column == column && error.message.contains(message) && error.source == source
        }
    }

    @Test func localeSetsLanguageAndRegion() {
        var environment = ConditionEnvironment()
        environment["locale"] = "zh-Hant_TW"
        #expect(environment["language"] == "zh")
        #expect(environment["region"] == "TW")
        environment["version"] = "3.0"
        #expect(environment["appVersion"] == "3.0")
    }

    @Test("Setting language moves a locale of another language to it, so texts follow the files conditions chose")
    func languageMovesTheLocale() {
        var environment = ConditionEnvironment()
        environment["locale"] = "en_US"
        environment["language"] = "de"
        #expect(environment["locale"] == "de_US" && environment["region"] == "US")
        environment["language"] = "de"  // the same language: the locale stays as it is
        environment["locale"] = "de_AT"
        environment["language"] = "de"
        #expect(environment["locale"] == "de_AT")
        var noRegion = ConditionEnvironment()
        noRegion["locale"] = "fr"
        noRegion["language"] = "it"
        #expect(noRegion["locale"] == "it")
        var noLocale = ConditionEnvironment()
        noLocale["language"] = "it"
        #expect(noLocale["locale"] == nil)
    }

    @Test("Lists nested past the limit are refused, not recursed into until the stack runs out")
    func nestedLists() {
        #expect {
            _ = try Condition(parsing: "x IN " + String(repeating: "{", count: 1000))
        } throws: { error in
            "\(error)".contains("nest deeper")
        }
        #expect(throws: Never.self) { _ = try Condition(parsing: "x IN {1, 2}") }
    }
}
