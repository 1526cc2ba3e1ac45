"""Loads a protoc descriptor set into a Python protobuf pool: shared by the fixture scripts."""
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory


def load_pool(descriptor_set_path):
    """A pool holding every file of the descriptor set."""
    descriptor_set = descriptor_pb2.FileDescriptorSet()
    with open(descriptor_set_path, "rb") as handle:
        descriptor_set.ParseFromString(handle.read())
    pool = descriptor_pool.DescriptorPool()
    for file_proto in descriptor_set.file:
        pool.Add(file_proto)
    return pool


def message_classes(pool):
    """A function from a full message name to its Python protobuf class."""
    return lambda name: message_factory.GetMessageClass(pool.FindMessageTypeByName(name))
