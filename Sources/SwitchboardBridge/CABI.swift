import Foundation
import SwitchboardRuntime

// The C functions switchboard.h declares. Each blocks its (foreign) thread on a semaphore
// while the work runs on Swift's concurrency pool; strings handed out are malloc'ed copies
// released by switchboard_free_string.

/// A C string the caller owns, or NULL if memory ran out.
func cString(_ text: String) -> UnsafeMutablePointer<CChar>? { strdup(text) }

/// Whether the calling thread runs a Swift task: blocking it on a semaphore while the work
/// needs the same few threads would deadlock, so the C functions refuse instead.
var isInsideSwiftConcurrency: Bool { withUnsafeCurrentTask { $0 != nil } }

let insideSwiftConcurrency = BridgeDocument.error(BridgeError(.badCommand, "called from a Swift task: the C functions block their thread; call them from a thread the host owns"))

/// Runs `body` to completion from a thread outside Swift concurrency.
func blocking<T: Sendable>(_ body: @escaping @Sendable () async -> T) -> T {
    let result = Locked<T?>(nil)
    let done = DispatchSemaphore(value: 0)
    Task.detached {
        let value = await body()
        result.withLock { $0 = value }
        done.signal()
    }
    done.wait()
    return result.current!
}

/// The open bridges by handle. A handle is a number, never reused, not a pointer: a handle
/// closed already (twice, or by another thread) finds nothing and answers "closed", instead of
/// reaching freed memory. A bridge stays alive while a call on it runs, however it is closed.
let openBridges = Locked<(next: Int, bridges: [Int: StringBridge])>((next: 1, bridges: [:]))

func bridge(from handle: OpaquePointer?) -> StringBridge? {
    guard let handle else { return nil }
    let id = Int(bitPattern: handle)
    return openBridges.withLock { $0.bridges[id] }
}

/// A caller's string, read no further than `limit` bytes (so an unterminated or huge one is
/// refused, not copied whole) and refused unless it is UTF-8 (rather than silently repaired).
/// Text that is not UTF-8 is a `notUTF8` error: `badConfiguration` for a configuration.
func text(_ pointer: UnsafePointer<CChar>?, limit: Int, what: String, notUTF8: BridgeError.Code = .badCommand) -> Result<String?, BridgeError> {
    guard let pointer else { return .success(nil) }
    let length = strnlen(pointer, limit + 1)
    guard length <= limit else { return .failure(BridgeError(.tooLarge, "the \(what) is longer than \(limit) bytes")) }
    let bytes = UnsafeRawBufferPointer(start: pointer, count: length)
    guard let string = String(validating: bytes.bindMemory(to: UInt8.self), as: UTF8.self) else {
        return .failure(BridgeError(notUTF8, "the \(what) is not UTF-8"))
    }
    return .success(string)
}

let noBridge = BridgeDocument.error(BridgeError(.closed, "no bridge: switchboard_open failed or the handle is NULL"))

/// `switchboard_open`: opens a bridge from its JSON configuration; NULL and an error document on failure.
@_cdecl("switchboard_open")
public func switchboard_open(_ configuration: UnsafePointer<CChar>?, _ error: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> OpaquePointer? {
    if isInsideSwiftConcurrency {
        error?.pointee = cString(insideSwiftConcurrency)
        return nil
    }
    let json: Data
    switch text(configuration, limit: BridgeConfiguration.maximumConfigurationBytes, what: "configuration", notUTF8: .badConfiguration) {
    case let .success(read): json = Data((read ?? "").utf8)
    case let .failure(failure):
        error?.pointee = cString(BridgeDocument.error(failure))
        return nil
    }
    let outcome = blocking { () async -> Result<StringBridge, BridgeError> in
        do throws(BridgeError) {
            return .success(try await StringBridge.open(try BridgeConfiguration(json: json)))
        } catch {
            return .failure(error)
        }
    }
    switch outcome {
    case let .success(bridge):
        error?.pointee = nil
        let id = openBridges.withLock { table -> Int in
            defer { table.next += 1 }
            table.bridges[table.next] = bridge
            return table.next
        }
        return OpaquePointer(bitPattern: id)
    case let .failure(failure):
        error?.pointee = cString(BridgeDocument.error(failure))
        return nil
    }
}

/// `switchboard_send_request`: one REST-style request; the answer document.
@_cdecl("switchboard_send_request")
public func switchboard_send_request(
    _ handle: OpaquePointer?, _ verb: UnsafePointer<CChar>?, _ path: UnsafePointer<CChar>?,
    _ query: UnsafePointer<CChar>?, _ body: UnsafePointer<CChar>?
) -> UnsafeMutablePointer<CChar>? {
    guard let bridge = bridge(from: handle) else { return cString(noBridge) }
    if isInsideSwiftConcurrency { return cString(insideSwiftConcurrency) }
    let head = bridge.options.maxRequestHeadBytes, limit = bridge.options.maxRequestBytes
    let read = (text(verb, limit: head, what: "verb"), text(path, limit: head, what: "path"),
                text(query, limit: head, what: "query"), text(body, limit: limit, what: "body"))
    do throws(BridgeError) {
        guard let verb = try read.0.get(), let path = try read.1.get() else {
            return cString(BridgeDocument.error(BridgeError(.badCommand, "the verb and the path are required")))
        }
        let query = try read.2.get() ?? "", body = try read.3.get() ?? ""
        // One budget for the verb, path and query together, as for a command's head.
        guard verb.utf8.count + path.utf8.count + query.utf8.count <= head else {
            return cString(BridgeDocument.error(BridgeError(.tooLarge, "the verb, path and query pass \(head) bytes together")))
        }
        return cString(blocking { await bridge.send(verb: verb, path: path, query: query, body: body) })
    } catch {
        return cString(BridgeDocument.error(error))
    }
}

/// `switchboard_send_command`: one request in the one-string form; the answer document.
@_cdecl("switchboard_send_command")
public func switchboard_send_command(_ handle: OpaquePointer?, _ command: UnsafePointer<CChar>?) -> UnsafeMutablePointer<CChar>? {
    guard let bridge = bridge(from: handle) else { return cString(noBridge) }
    if isInsideSwiftConcurrency { return cString(insideSwiftConcurrency) }
    // Each part is held to its own limit when parsed; the separators between them (a
    // blank line, CRLFs, or the space before a one-line body) count against neither.
    switch text(command, limit: bridge.options.maxRequestBytes + bridge.options.maxRequestHeadBytes + 4, what: "command") {
    case let .failure(error): return cString(BridgeDocument.error(error))
    case let .success(command):
        let command = command ?? ""
        return cString(blocking { await bridge.send(command: command) })
    }
}

/// `switchboard_receive_message`: the next event document; NULL on timeout.
@_cdecl("switchboard_receive_message")
public func switchboard_receive_message(_ handle: OpaquePointer?, _ timeoutMilliseconds: Int32) -> UnsafeMutablePointer<CChar>? {
    guard let bridge = bridge(from: handle) else { return cString(BridgeDocument.closed) }
    // Waiting here on a Swift task's thread would hold one of the few the pool has, and the
    // events it waits for are queued by work that needs that pool: answered instead.
    if isInsideSwiftConcurrency { return cString(insideSwiftConcurrency) }
    let timeout: Duration? = timeoutMilliseconds < 0 ? nil : .milliseconds(timeoutMilliseconds)
    // Already on the host's thread: wait here, with no task in between.
    return bridge.receiveBlocking(timeout: timeout).flatMap(cString)
}

/// `switchboard_free_string`: releases a string the library returned.
@_cdecl("switchboard_free_string")
public func switchboard_free_string(_ string: UnsafeMutablePointer<CChar>?) {
    free(string)
}

/// `switchboard_close`: closes the bridge and its connections, then releases it. A handle
/// closed already is ignored.
@_cdecl("switchboard_close")
public func switchboard_close(_ handle: OpaquePointer?) {
    guard let handle else { return }
    let id = Int(bitPattern: handle)
    guard let bridge = openBridges.withLock({ $0.bridges.removeValue(forKey: id) }) else { return }
    // From a Swift task, the close finishes in the background rather than deadlock.
    if isInsideSwiftConcurrency {
        Task { await bridge.close() }
        return
    }
    blocking { await bridge.close() }
}

/// The library's version, a static string: never freed, never changes.
nonisolated(unsafe) let libraryVersion: UnsafeMutablePointer<CChar> = strdup(StringBridge.version)!

/// `switchboard_version`: the library's version, for a core to check the library it loaded.
@_cdecl("switchboard_version")
public func switchboard_version() -> UnsafePointer<CChar> {
    UnsafePointer(libraryVersion)
}
