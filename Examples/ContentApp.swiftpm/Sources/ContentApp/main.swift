// The app's entry point: ContentApp (Examples/AppClient/Sources/SwiftUIExample) is a library
// type there, so `@main` is here.
ContentApp.main()
