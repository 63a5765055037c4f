import CQRencode

/// The QR code of a bridge's setup payload (`X-HM://…`), which the Home app scans instead of the
/// code being typed: drawn by libqrencode, shown as SVG on the web page and as text in a terminal.
package struct SetupQRCode: Sendable, Equatable {
    /// The modules, row by row: true is dark.
    let modules: [[Bool]]

    /// Encodes `payload`; nil when libqrencode cannot (it never fails for a setup payload's 20
    /// characters but for lack of memory).
    package init?(payload: String) {
        guard let code = QRcode_encodeString(payload, 0, QR_ECLEVEL_M, QR_MODE_8, 1) else { return nil }
        defer { QRcode_free(code) }
        let width = Int(code.pointee.width)
        let data = UnsafeBufferPointer(start: code.pointee.data, count: width * width)
        // Bit 0 of each byte is the module's colour; the others say what it is part of.
        modules = (0..<width).map { row in (0..<width).map { column in data[row * width + column] & 1 == 1 } }
    }

    /// The code as SVG: one path of unit squares with a quiet zone of four modules, black on white
    /// whatever the page's palette (a scanner wants the contrast).
    package var svg: String {
        let size = modules.count + 8
        var path = ""
        for (row, line) in modules.enumerated() {
            for (column, dark) in line.enumerated() where dark { path += "M\(column + 4) \(row + 4)h1v1h-1z" }
        }
        return """
            <svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 \(size) \(size)" shape-rendering="crispEdges" \
            role="img" aria-label="HomeKit setup code"><rect width="\(size)" height="\(size)" fill="#fff"/>\
            <path d="\(path)" fill="#000"/></svg>
            """
    }

    /// The code for a terminal: two rows a line in half blocks, dark on light, with a quiet zone.
    package var text: String {
        let quiet = 2
        let width = modules.count + 2 * quiet
        func dark(_ row: Int, _ column: Int) -> Bool {
            let (r, c) = (row - quiet, column - quiet)
            return r >= 0 && c >= 0 && r < modules.count && c < modules.count && modules[r][c]
        }
        var lines: [String] = []
        for row in stride(from: 0, to: width, by: 2) {
            var line = ""
            for column in 0..<width {
                // Light modules are drawn (a terminal's background may be dark): a full block is
                // two light ones.
                switch (!dark(row, column), !dark(row + 1, column)) {
                case (true, true): line += "█"
                case (true, false): line += "▀"
                case (false, true): line += "▄"
                case (false, false): line += " "
                }
            }
            lines.append(line)
        }
        return lines.joined(separator: "\n")
    }
}
