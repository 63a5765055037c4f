import Testing

@testable import HAPProtocol

@Suite struct HTTPTests {
    @Test func encodesRequests() {
        let get = HTTPRequest.get("/accessories").encoded(host: "127.0.0.1:51826")
        #expect(String(decoding: get, as: UTF8.self) == "GET /accessories HTTP/1.1\r\nHost: 127.0.0.1:51826\r\n\r\n")
        let post = HTTPRequest.pairing("/pair-setup", [6, 1, 1]).encoded(host: "h")
        #expect(
            post
                == Array(
                    "POST /pair-setup HTTP/1.1\r\nHost: h\r\nContent-Type: application/pairing+tlv8\r\nContent-Length: 3\r\n\r\n"
                        .utf8) + [6, 1, 1])
        let put = HTTPRequest.putJSON("/characteristics", Array("{}".utf8)).encoded(host: "h")
        #expect(
            String(decoding: put, as: UTF8.self).contains("Content-Type: application/hap+json\r\nContent-Length: 2"))
    }

    @Test func parsesAResponseDeliveredByteByByte() throws {
        let text = "HTTP/1.1 200 OK\r\nContent-Type: application/hap+json\r\nContent-Length: 13\r\n\r\n{\"status\": 0}"
        var parser = HTTPResponseParser()
        var messages: [HTTPMessage] = []
        for byte in Array(text.utf8) {
            parser.append([byte])
            if let message = try parser.next() { messages.append(message) }
        }
        #expect(messages.count == 1)
        #expect(messages[0].kind == .response && messages[0].statusCode == 200 && messages[0].reason == "OK")
        #expect(messages[0].header("content-type") == "application/hap+json")
        #expect(String(decoding: messages[0].body, as: UTF8.self) == "{\"status\": 0}")
        // Nothing of it is left over: the next response is read from its first byte.
        parser.append(Array("HTTP/1.1 204 No Content\r\n\r\n".utf8))
        #expect(try parser.next()?.statusCode == 204)
    }

    @Test func parsesEventsAndResponsesInOneRead() throws {
        let event = "EVENT/1.0 200 OK\r\nContent-Type: application/hap+json\r\nContent-Length: 2\r\n\r\n{}"
        let noContent = "HTTP/1.1 204 No Content\r\n\r\n"
        var parser = HTTPResponseParser()
        parser.append(Array((event + noContent + event).utf8))
        let kinds = try [parser.next(), parser.next(), parser.next()].map { $0?.kind }
        #expect(kinds == [.event, .response, .event])
        #expect(try parser.next() == nil)
    }

    @Test func decodesChunkedBodies() throws {
        let text =
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + "4\r\nWiki\r\n" + "6;ext=1\r\npedia \r\n"
            + "E\r\nin \r\n\r\nchunks.\r\n" + "0\r\n\r\n"
        var parser = HTTPResponseParser()
        var message: HTTPMessage?
        for byte in Array(text.utf8) {
            parser.append([byte])
            if let next = try parser.next() { message = next }
        }
        #expect(String(decoding: message?.body ?? [], as: UTF8.self) == "Wikipedia in \r\n\r\nchunks.")
    }

    @Test(arguments: [
        "SSH-2.0-OpenSSH_9.2\r\n",
        "\u{16}\u{03}\u{01}\u{02}\u{00}",
        "HTTP/1.1 2000 OK\r\n\r\n",
        "HTTP/1.1 200 OK\r\nno colon here\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: -4\r\n\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
    ])
    func garbageIsATypedError(text: String) {
        var parser = HTTPResponseParser()
        parser.append(Array(text.utf8))
        #expect {
            _ = try parser.next()
        } throws: { error in
            (error as? HAPError)?.code == .malformedHTTP
        }
        // And stays failed
        #expect(throws: HAPError.self) { try parser.next() }
    }

    @Test func endlessHeadersAreRefused() {
        var parser = HTTPResponseParser()
        parser.append(Array("HTTP/1.1 200 OK\r\n".utf8))
        parser.append([UInt8](repeating: 0x61, count: HTTPResponseParser.maximumHeadLength + 1))
        #expect(throws: HAPError.self) { try parser.next() }
    }
}
