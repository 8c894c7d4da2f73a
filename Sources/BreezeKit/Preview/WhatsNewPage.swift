import Foundation
package import FreshAir

/// Renders a "what's new" screen as one self-contained HTML page (images inlined), so an
/// author can look at what a device will show.
package enum WhatsNewPage {
    package static func html(features: [Feature], from: String, to: String, locale: String) -> String {
        let cards = features.map { feature -> String in
            let image =
                feature.image.flatMap(dataURI).map { #"<img src="\#($0)" alt="">"# }
                ?? #"<div class="missing">no image</div>"#
            return """
                <section class="feature">
                  \(image)
                  <div><h2>\(escape(feature.title ?? feature.key))</h2>
                  <p>\(escape(feature.description ?? ""))</p>
                  <small>since \(escape(feature.version))</small></div>
                </section>
                """
        }.joined(separator: "\n")
        let body = features.isEmpty ? #"<p class="empty">Nothing new to show between these versions.</p>"# : cards
        return """
            <!doctype html>
            <html lang="\(escape(locale))"><head><meta charset="utf-8">
            <title>What's new in \(escape(to))</title>
            <style>
              body { font-family: "DejaVu Sans", Helvetica, Arial, sans-serif; background: #f4f6fb; color: #1d2433; margin: 0; padding: 32px; }
              h1 { font-size: 28px; margin: 0 0 4px; } .sub { color: #5b6475; margin: 0 0 24px; }
              .feature { display: flex; gap: 20px; align-items: center; background: #fff; border-radius: 14px;
                         padding: 16px 20px; margin-bottom: 14px; box-shadow: 0 2px 8px rgba(0,0,0,.08); }
              .feature img, .missing { width: 96px; height: 96px; border-radius: 12px; flex: none; object-fit: cover; }
              .missing { background: #dde2ec; color: #5b6475; font-size: 12px; display: flex; align-items: center; justify-content: center; }
              h2 { font-size: 19px; margin: 0 0 6px; } p { margin: 0 0 6px; line-height: 1.4; } small { color: #8a93a5; }
            </style></head>
            <body>
            <h1>What's new in \(escape(to))</h1>
            <p class="sub">Since \(escape(from)) · \(escape(locale))</p>
            \(body)
            </body></html>
            """
    }

    private static func dataURI(_ url: URL) -> String? {
        guard let data = try? Data(contentsOf: url) else { return nil }
        let type =
            switch url.pathExtension.lowercased() {
            case "png": "image/png"
            case "jpg", "jpeg": "image/jpeg"
            case "gif": "image/gif"
            case "webp": "image/webp"
            case "pdf": "application/pdf"
            default: "application/octet-stream"
            }
        return "data:\(type);base64,\(data.base64EncodedString())"
    }

    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}
