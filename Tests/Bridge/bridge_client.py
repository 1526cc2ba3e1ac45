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

# Tests/Bridge/responses.json scripts one profile per concurrent call, versions "n0" to
# "n199", served one to each request in turn (the last repeating).
THREADS, CALLS_PER_THREAD = 8, 25
CALLS = THREADS * CALLS_PER_THREAD
results = {}


def served_number(answer):
    """The N of a success answer's version "nN", or None."""
    if not answer or answer.get("type") != "success":
        return None
    version = answer.get("result", {}).get("version", "")
    return int(version[1:]) if version[:1] == "n" and version[1:].isdigit() else None


def worker(index):
    results[index] = [request("GET", f"/v1/profile/user{index}/v{call}") for call in range(CALLS_PER_THREAD)]


threads = [threading.Thread(target=worker, args=(index,)) for index in range(THREADS)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
answers = [answer for index in range(THREADS) for answer in results.get(index, [])]
check(len(answers) == CALLS and all(a and a["type"] == "success" and a["result"]["name"] == "QWRh" for a in answers),
      f"{THREADS} threads made {CALLS_PER_THREAD} calls each, each a success", answers[:2])
# A thread's calls follow one another, so the server serves them in order.
numbers = {index: [served_number(answer) for answer in results.get(index, [])] for index in range(THREADS)}
in_order = all(None not in numbers[index] and numbers[index] == sorted(set(numbers[index])) for index in range(THREADS))
check(in_order, "each thread's answers come in the order the server served them",
      {index: numbers[index] for index in range(THREADS) if None in numbers[index] or numbers[index] != sorted(set(numbers[index]))})
# Every scripted answer reached exactly one call: none lost, none duplicated.
received = sorted(number for index in range(THREADS) for number in numbers[index] if number is not None)
check(received == list(range(CALLS)), f"the {CALLS} concurrent calls received answers n0 to n{CALLS - 1}, each exactly once",
      {"missing": sorted(set(range(CALLS)) - set(received)),
       "duplicated": sorted({n for n in received if received.count(n) > 1}), "received": len(received)})

lib.switchboard_close(bridge)
print("  ok   closed")
print(f"bridge client (python): {failures} failed" if failures else "bridge client (python): all passed")
sys.exit(1 if failures else 0)
