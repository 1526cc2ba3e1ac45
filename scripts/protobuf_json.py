"""Writes the canonical protobuf JSON of each binary fixture, using Python protobuf.

usage: protobuf_json.py DESCRIPTOR_SET BINARY_DIR JSON_DIR
Fixture files are named <case>.<full.message.Name>.binpb.
"""
import os
import sys

from google.protobuf import json_format

from protobuf_pool import load_pool, message_classes


def main() -> None:
    descriptor_set_path, binary_dir, json_dir = sys.argv[1:4]
    pool = load_pool(descriptor_set_path)
    message_class_named = message_classes(pool)
    for name in sorted(os.listdir(binary_dir)):
        base = name[: -len(".binpb")]
        message_name = base.split(".", 1)[1]
        message_class = message_class_named(message_name)
        message = message_class()
        with open(os.path.join(binary_dir, name), "rb") as handle:
            message.ParseFromString(handle.read())
        text = json_format.MessageToJson(message, indent=2, sort_keys=True, descriptor_pool=pool)
        with open(os.path.join(json_dir, base + ".json"), "w", encoding="utf-8") as handle:
            handle.write(text + "\n")


if __name__ == "__main__":
    main()
