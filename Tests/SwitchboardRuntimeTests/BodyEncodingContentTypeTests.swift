import SwitchboardRuntime
import Testing

/// A response's Content-Type picks the decoder: the media type, in any case, with
/// parameters and blanks around it ignored; anything else is not a body encoding.
@Suite struct BodyEncodingContentTypeTests {
    @Test(arguments: [
        ("application/json", BodyEncoding.json),
        ("Application/JSON; charset=utf-8", .json),
        (" \tapplication/json ;q=1", .json),
        ("application/x-protobuf", .protobuf),
        ("APPLICATION/PROTOBUF", .protobuf),
        ("application/vnd.google.protobuf; proto=signal.Envelope", .protobuf),
    ])
    func knownMediaTypesAreRead(contentType: String, expected: BodyEncoding) {
        #expect(BodyEncoding(contentType: contentType) == expected)
    }

    @Test(arguments: ["", ";", "text/plain", "application/jsonx", "application/jso", "application/grpc", "application/json\u{301}", "applicatión/json"])
    func otherMediaTypesAreNot(contentType: String) {
        #expect(BodyEncoding(contentType: contentType) == nil)
    }
}
