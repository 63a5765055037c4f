import Foundation
import History
import HomeModel
import Hummingbird

/// The history pages a member of a home reads: one characteristic's values over a day, a week or a
/// month (`/history`), drawn on the hub with the figures beside, and the home's timeline of what
/// happened (`/timeline`). A non-member learns no more than that there is no such home.
struct HistoryRoutes {
    let site: WebSite

    /// The spans a page offers, by their query value.
    enum Span: String, CaseIterable {
        case day, week, month

        var length: TimeInterval {
            switch self {
            case .day: 86_400
            case .week: 7 * 86_400
            case .month: 30 * 86_400
            }
        }

        var label: String {
            switch self {
            case .day: "Last 24 hours"
            case .week: "Last 7 days"
            case .month: "Last 30 days"
            }
        }
    }

    var collection: RouteCollection<WebRequestContext> {
        let routes = RouteCollection(context: WebRequestContext.self)
        routes.get("/history") { request, _ in await page(request, characteristicHistory) }
        routes.get("/timeline") { request, _ in await page(request, timeline) }
        return routes
    }

    /// `page` for the session's member home the query names; otherwise the login or a problem.
    private func page(
        _ request: Request, _ page: (Request, Session, [HomeSummary], Home, HistoryStore) async -> Response
    )
        async -> Response
    {
        guard let session = site.session(of: request) else { return .seeOther("/login") }
        let homes = await site.manager.homes(for: session.account)
        let name = request.uri.queryParameters["home"].map(String.init) ?? ""
        guard let home = try? await site.manager.home(name, account: session.account) else {
            return .problem(
                "No such home", "There is no home named '\(name)'.", session: session, homes: homes, status: .notFound)
        }
        guard let history = site.history else {
            return .problem(
                "No history", "This gateway keeps no history (history.enabled is false in its configuration).",
                session: session, homes: homes, status: .notFound)
        }
        return await page(request, session, homes, home, history)
    }

    private func characteristicHistory(
        _ request: Request, _ session: Session, _ homes: [HomeSummary], _ home: Home, _ history: HistoryStore
    ) async -> Response {
        let query = request.uri.queryParameters
        let span = query["span"].flatMap { Span(rawValue: String($0)) } ?? .day
        let found: (Accessory, Service, Characteristic)
        do throws(HomeError) {
            let accessory = try home.accessory(named: query["accessory"].map(String.init) ?? "")
            let service = try accessory.service(named: query["service"].map(String.init) ?? "")
            let type = CharacteristicType(rawValue: query["characteristic"].map(String.init) ?? "")
            guard let characteristic = service.characteristic(type) else {
                throw HomeError(.notFound, "'\(service.name)' of '\(accessory.name)' has no \(type.rawValue).")
            }
            found = (accessory, service, characteristic)
        } catch {
            return .problem("Not found", error.message, session: session, homes: homes, status: .notFound)
        }
        let (accessory, service, characteristic) = found
        let to = Date()
        let from = to.addingTimeInterval(-span.length)
        let answer: HistoryAnswer
        do {
            answer = try await history.points(
                accessory: accessory.id, service: service.id, characteristic: characteristic.type, from: from, to: to)
        } catch {
            return .problem("No history", error.message, session: session, homes: homes, status: .badRequest)
        }
        let heading = "\(accessory.name): \(words(characteristic.type.rawValue))"
        let chart = HistoryChart(kind: Self.kind(of: characteristic), from: from, to: to)
        let rows = HistoryChart.rows(of: answer)
        let unit = unitSuffix(characteristic.metadata.unit, type: characteristic.type).trimmingCharacters(
            in: .whitespaces)
        let value = unit.isEmpty ? "Value" : "Value (\(unit))"
        let columns =
            if case .hourly = answer { ["Hour", "Lowest", "Mean", "Highest"] } else { ["Time", value] }
        let link = { (span: Span) in
            "/history?home=\(queryEncoded(home.name))&accessory=\(queryEncoded(accessory.name))"
                + "&service=\(queryEncoded(service.name))&characteristic=\(characteristic.type.rawValue)&span=\(span.rawValue)"
        }
        let page: [String: Any] = [
            "heading": heading, "home": home.name, "homeQuery": queryEncoded(home.name),
            "spans": Span.allCases.map { ["href": link($0), "label": $0.label, "current": $0 == span] },
            "spanLabel": span.label.lowercased(), "empty": rows.isEmpty, "svg": chart.svg(answer, title: heading),
            "columns": columns, "rows": rows.map { ["cells": $0] },
        ]
        return .page(Pages.render("history", Pages.Frame(title: heading, session: session, homes: homes), page))
    }

    private func timeline(
        _ request: Request, _ session: Session, _ homes: [HomeSummary], _ home: Home, _ history: HistoryStore
    ) async -> Response {
        let span = request.uri.queryParameters["span"].flatMap { Span(rawValue: String($0)) } ?? .day
        let spans: [Span] = [.day, .week]
        let to = Date()
        let events: [TimelineEvent]
        do {
            events = try await history.timeline(home: home.id, from: to.addingTimeInterval(-span.length), to: to)
        } catch {
            return .problem("No history", error.message, session: session, homes: homes, status: .badRequest)
        }
        let page: [String: Any] = [
            "home": home.name, "homeQuery": queryEncoded(home.name),
            "spans": spans.map {
                [
                    "href": "/timeline?home=\(queryEncoded(home.name))&span=\($0.rawValue)", "label": $0.label,
                    "current": $0 == span,
                ]
            },
            "empty": events.isEmpty,
            "events": events.reversed().map { event in
                [
                    "iso": event.time.formatted(.iso8601), "when": Self.when(event.time),
                    "text": "\(event.subject) \(event.detail)",
                ]
            },
        ]
        return .page(
            Pages.render(
                "timeline", Pages.Frame(title: "What happened in \(home.name)", session: session, homes: homes), page))
    }

    /// How a characteristic's values are drawn: on and off as bands, a growing meter's use per day
    /// as bars, any other number as a line.
    static func kind(of characteristic: Characteristic) -> HistoryChart.Kind {
        if characteristic.metadata.format == .bool { return .onOff }
        if characteristic.type == .totalConsumption { return .dailyUse }
        return .line
    }

    /// A time as people read it on the hub: `Sun 29 Nov 07:42`.
    private static func when(_ date: Date) -> String {
        date.formatted(.dateTime.weekday(.abbreviated).day().month(.abbreviated).hour().minute())
    }
}
