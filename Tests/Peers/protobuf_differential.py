"""Reads messages our codec wrote and answers with what Python protobuf makes of them.

usage: protobuf_differential.py DESCRIPTOR_SET
Each input line: <full.message.Name> <hex of our binary, "-" for none> <base64 of our JSON>.
Each output line: <hex of Python's deterministic re-serialization of our binary>
                  <hex of Python's binary for our JSON> <base64 of Python's JSON for our binary>
(hex "-" for no bytes)
or "error <what>" when Python refuses an input.
"""
import base64
import os
import sys

from google.protobuf import json_format

# The fixture scripts' pool loader, so both read descriptor sets the same way.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
from protobuf_pool import load_pool, message_classes  # noqa: E402


def main() -> None:
    pool = load_pool(sys.argv[1])
    class_named = message_classes(pool)
    classes = {}
    print("ready", flush=True)
    for line in sys.stdin:
        name, binary_hex, json_b64 = line.split()
        try:
            if name not in classes:
                classes[name] = class_named(name)
            from_binary = classes[name]()
            from_binary.ParseFromString(b"" if binary_hex == "-" else bytes.fromhex(binary_hex))
            from_json = json_format.Parse(base64.b64decode(json_b64).decode("utf-8"), classes[name](), descriptor_pool=pool)
            print(
                from_binary.SerializeToString(deterministic=True).hex() or "-",
                from_json.SerializeToString(deterministic=True).hex() or "-",
                base64.b64encode(json_format.MessageToJson(from_binary, indent=None, descriptor_pool=pool).encode("utf-8")).decode("ascii"),
                flush=True,
            )
        except Exception as error:  # noqa: BLE001 - reported to the test, which fails
            print("error", repr(error).replace(" ", "_"), flush=True)


if __name__ == "__main__":
    main()
