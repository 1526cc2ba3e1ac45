// The TLS settings, server certificates and socket errors a gRPC user meets come from the
// I/O core every transport shares; importing this module is enough.
@_exported import struct SwitchboardIO.TLSOptions
@_exported import class SwitchboardIO.TLSServerContext
@_exported import enum SwitchboardIO.NetworkError
