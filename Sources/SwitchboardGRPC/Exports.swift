// The TLS settings a gRPC client takes are the WebSocket client's; importing this module is enough.
@_exported import struct SwitchboardWebSocket.TLSOptions
