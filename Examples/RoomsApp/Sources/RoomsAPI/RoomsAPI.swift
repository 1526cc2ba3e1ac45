// The SDK itself is generated from this folder's *.sb files at build time by the
// SwitchboardGenerator plugin. SwiftPM needs one Swift file in a target; this one also
// re-exports the runtime, so `import RoomsAPI` is all an app writes.
@_exported import SwitchboardRuntime
