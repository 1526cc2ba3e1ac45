"""Signal's WebSocketMessage envelope, written and read by hand (no generated code), for
the Python peers that must build frames our own codecs would never produce.
WebSocketMessage: type 1 (1 request, 2 response), request 2, response 3.
Request: verb 1, path 2, body 3, id 4, headers 5. Response: id 1, status 2, message 3, body 4."""


def varint(value):
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def field(number, payload):
    """A length-delimited field."""
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def read_varint(data, index):
    """The varint at `index` and the index after it."""
    value, shift = 0, 0
    while True:
        byte = data[index]
        index += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, index


def request_id(frame):
    """The id of a request envelope, or None."""
    try:
        index = 0
        while index < len(frame):
            tag, index = read_varint(frame, index)
            if tag == 0x08:
                _, index = read_varint(frame, index)
            elif tag == 0x12:
                length, index = read_varint(frame, index)
                inner, position = frame[index:index + length], 0
                while position < len(inner):
                    inner_tag, position = read_varint(inner, position)
                    if inner_tag == 0x20:
                        return read_varint(inner, position)[0]
                    size, position = read_varint(inner, position)
                    position += size
                return None
            else:
                return None
    except IndexError:
        return None
    return None
