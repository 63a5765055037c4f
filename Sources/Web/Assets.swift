import Hummingbird

/// The page's stylesheet and script, served from the binary (a hub may have no internet, and a
/// single binary is all a Pi needs). The script only enhances: every form works without it.
enum Assets {
    /// Resources/app.css.
    static let stylesheet = String(decoding: PackageResources.app_css, as: UTF8.self)
    /// Resources/app.js.
    static let script = String(decoding: PackageResources.app_js, as: UTF8.self)
}

/// The page's stylesheet, script and icon.
enum AssetRoutes {
    static var collection: RouteCollection<WebRequestContext> {
        let routes = RouteCollection(context: WebRequestContext.self)
        routes.get("/static/app.css") { _, _ in Response.asset(Assets.stylesheet, type: "text/css; charset=utf-8") }
        routes.get("/static/app.js") { _, _ in Response.asset(Assets.script, type: "text/javascript; charset=utf-8") }
        routes.get("/favicon.svg") { _, _ in Response.asset(CategoryIcons.favicon, type: "image/svg+xml") }
        return routes
    }
}
