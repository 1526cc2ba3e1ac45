"""Drives the string bridge through Python ctypes against `switchboard mock-server`, as a
Python core would: calls, typed errors, pushes in order, and concurrent calls from threads.

usage: bridge_client.py <libswitchboard_bridge.so> <ws:// URL> <schema directory>
"""
import ctypes
import json
import sys
import threading

library_path, url, schema = sys.argv[1:4]
lib = ctypes.CDLL(library_path)
# Returned strings are kept as raw pointers so they can be handed back to be freed.
lib.switchboard_open.restype = ctypes.c_void_p
lib.switchboard_open.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p)]
lib.switchboard_send_request.restype = ctypes.c_void_p
lib.switchboard_send_request.argtypes = [ctypes.c_void_p] + [ctypes.c_char_p] * 4
lib.switchboard_send_command.restype = ctypes.c_void_p
lib.switchboard_send_command.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
lib.switchboard_receive_message.restype = ctypes.c_void_p
lib.switchboard_receive_message.argtypes = [ctypes.c_void_p, ctypes.c_int32]
lib.switchboard_free_string.argtypes = [ctypes.c_void_p]
lib.switchboard_close.argtypes = [ctypes.c_void_p]

failures = 0


def take(pointer):
    """The JSON document at `pointer`, freed by the library's own call; None for NULL."""
    if not pointer:
        return None
    text = ctypes.string_at(pointer).decode("utf-8")
    lib.switchboard_free_string(pointer)
    return json.loads(text)


def check(condition, what, detail=None):
    global failures
    if condition:
        print(f"  ok   {what}")
    else:
        failures += 1
        print(f"  FAIL {what}: {detail}")


def request(verb, path, query=None, body=None):
    encode = lambda value: value.encode() if value is not None else None
    return take(lib.switchboard_send_request(bridge, encode(verb), encode(path), encode(query), encode(body)))


error = ctypes.c_void_p()
config = {"schema": schema, "url": url, "credentials": "ada.1:secret", "requestTimeoutMs": 10000}
bridge = lib.switchboard_open(json.dumps(config).encode(), ctypes.byref(error))
if not bridge:
    print("  FAIL open:", take(error.value))
    sys.exit(1)
print("  ok   opened the bridge")

answer = request("GET", "/v1/accounts/username_hash/-_8")
check(answer == {"type": "success", "status": 200, "result": {"uuid": "aci-ada"}}, "a call answers with its typed result", answer)
answer = request("GET", "/v1/accounts/username_hash/-_8")
check(answer["type"] == "nonSuccess" and answer["error"] == "notFound" and answer["status"] == 404, "a declared error", answer)
answer = take(lib.switchboard_send_command(bridge, b"GET /v1/accounts/username_hash/-_8"))
check(answer["error"] == "rateLimited" and answer["retryAfterMs"] == 5000, "the one-string form and a declared delay", answer)
answer = request("GET", "/v1/chats", "limit=lots")
check(answer["type"] == "error" and answer["error"] == "schemaViolation" and answer["status"] == 422, "a query the schema refuses", answer)
answer = request("POST", "/v1/profile")
check(answer["type"] == "error" and answer["error"] == "methodNotAllowed" and answer["status"] == 405, "a verb the path does not take", answer)

events = [take(lib.switchboard_receive_message(bridge, 10000)) for _ in range(4)]
check([event["payload"]["sourceServiceId"] for event in events[:3]] == ["first", "second", "third"], "pushes arrive in order", events)
check(events[3]["event"] == "queueEmpty", "queue empty follows them", events[3])
check(take(lib.switchboard_receive_message(bridge, 100)) is None, "receive times out with None")

results = {}


def worker(index):
    results[index] = [request("GET", f"/v1/profile/user{index}/v{call}") for call in range(20)]


threads = [threading.Thread(target=worker, args=(index,)) for index in range(8)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
answers = [answer for index in range(8) for answer in results[index]]
check(len(answers) == 160 and all(a["type"] == "success" and a["result"]["name"] == "QWRh" for a in answers),
      "8 threads made 20 calls each, each with its own answer", answers[:2])

lib.switchboard_close(bridge)
print("  ok   closed")
print(f"bridge client (python): {failures} failed" if failures else "bridge client (python): all passed")
sys.exit(1 if failures else 0)
