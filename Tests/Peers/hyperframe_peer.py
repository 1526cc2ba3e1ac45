"""HTTP/2 frames as Python's `hyperframe` (python-hyper) writes and reads them, the
independent peer for HTTP2FrameInteropTests. Reads a JSON file:
{"parse": "<hex of frames we wrote>", "frames": [frame descriptions to serialize]}.
Prints {"parsed": [descriptions of what it read], "serialized": "<hex>"}.
A description: {"type": "DATA", "stream": 1, "flags": ["END_STREAM"], ...type fields}."""
import json
import sys

from hyperframe.frame import (ContinuationFrame, DataFrame, Frame, GoAwayFrame, HeadersFrame,
                              PingFrame, PriorityFrame, RstStreamFrame, SettingsFrame,
                              WindowUpdateFrame)


def describe(frame):
    d = {"type": frame.__class__.__name__.replace("Frame", "").upper(), "stream": frame.stream_id,
         "flags": sorted(frame.flags)}
    if isinstance(frame, DataFrame):
        d["data"] = frame.data.hex()
        d["flow"] = frame.flow_controlled_length
    elif isinstance(frame, (HeadersFrame, ContinuationFrame)):
        d["data"] = frame.data.hex()
    elif isinstance(frame, RstStreamFrame):
        d["code"] = frame.error_code
    elif isinstance(frame, SettingsFrame):
        d["settings"] = sorted([k, v] for k, v in frame.settings.items())
    elif isinstance(frame, PingFrame):
        d["data"] = frame.opaque_data.hex()
    elif isinstance(frame, GoAwayFrame):
        d["last"] = frame.last_stream_id
        d["code"] = frame.error_code
        d["data"] = frame.additional_data.hex()
    elif isinstance(frame, WindowUpdateFrame):
        d["increment"] = frame.window_increment
    return d


def build(d):
    kinds = {"DATA": DataFrame, "HEADERS": HeadersFrame, "CONTINUATION": ContinuationFrame,
             "RSTSTREAM": RstStreamFrame, "SETTINGS": SettingsFrame, "PING": PingFrame,
             "GOAWAY": GoAwayFrame, "WINDOWUPDATE": WindowUpdateFrame, "PRIORITY": PriorityFrame}
    frame = kinds[d["type"]](d["stream"])
    for flag in d.get("flags", []):
        frame.flags.add(flag)
    if d["type"] in ("DATA", "HEADERS", "CONTINUATION"):
        frame.data = bytes.fromhex(d.get("data", ""))
        if "pad" in d:
            frame.flags.add("PADDED")
            frame.pad_length = d["pad"]
    elif d["type"] == "RSTSTREAM":
        frame.error_code = d["code"]
    elif d["type"] == "SETTINGS":
        frame.settings = {k: v for k, v in d.get("settings", [])}
    elif d["type"] == "PING":
        frame.opaque_data = bytes.fromhex(d["data"])
    elif d["type"] == "GOAWAY":
        frame.last_stream_id = d["last"]
        frame.error_code = d["code"]
        frame.additional_data = bytes.fromhex(d.get("data", ""))
    elif d["type"] == "WINDOWUPDATE":
        frame.window_increment = d["increment"]
    elif d["type"] == "PRIORITY":
        frame.depends_on = d.get("depends", 0)
        frame.stream_weight = d.get("weight", 15)
    return frame


with open(sys.argv[1]) as f:
    job = json.load(f)
data = memoryview(bytes.fromhex(job["parse"]))
parsed = []
while len(data) >= 9:
    frame, length = Frame.parse_frame_header(data[:9])
    frame.parse_body(data[9:9 + length])
    parsed.append(describe(frame))
    data = data[9 + length:]
serialized = b"".join(build(d).serialize() for d in job["frames"])
print(json.dumps({"parsed": parsed, "serialized": serialized.hex()}))
