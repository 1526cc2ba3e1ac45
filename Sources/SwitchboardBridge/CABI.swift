import Foundation
import SwitchboardRuntime

// The C functions switchboard.h declares. Each blocks its (foreign) thread on a semaphore
// while the work runs on Swift's concurrency pool; strings handed out are malloc'ed copies
// released by switchboard_free_string.

/// A C string the caller owns, or NULL if memory ran out.
func cString(_ text: String) -> UnsafeMutablePointer<CChar>? { strdup(text) }

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

func bridge(from handle: OpaquePointer?) -> StringBridge? {
    handle.map { Unmanaged<StringBridge>.fromOpaque(UnsafeRawPointer($0)).takeUnretainedValue() }
}

func text(_ pointer: UnsafePointer<CChar>?) -> String? { pointer.map { String(cString: $0) } }

let noBridge = BridgeDocument.error(BridgeError(.closed, "no bridge: switchboard_open failed or the handle is NULL"))

/// `switchboard_open`: opens a bridge from its JSON configuration; NULL and an error document on failure.
@_cdecl("switchboard_open")
public func switchboard_open(_ configuration: UnsafePointer<CChar>?, _ error: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> OpaquePointer? {
    let json = Data(text(configuration)?.utf8 ?? "".utf8)
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
        return OpaquePointer(Unmanaged.passRetained(bridge).toOpaque())
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
    guard let verb = text(verb), let path = text(path) else {
        return cString(BridgeDocument.error(BridgeError(.badCommand, "the verb and the path are required")))
    }
    let query = text(query) ?? "", body = text(body) ?? ""
    return cString(blocking { await bridge.send(verb: verb, path: path, query: query, body: body) })
}

/// `switchboard_send_command`: one request in the one-string form; the answer document.
@_cdecl("switchboard_send_command")
public func switchboard_send_command(_ handle: OpaquePointer?, _ command: UnsafePointer<CChar>?) -> UnsafeMutablePointer<CChar>? {
    guard let bridge = bridge(from: handle) else { return cString(noBridge) }
    let command = text(command) ?? ""
    return cString(blocking { await bridge.send(command: command) })
}

/// `switchboard_receive_message`: the next event document; NULL on timeout.
@_cdecl("switchboard_receive_message")
public func switchboard_receive_message(_ handle: OpaquePointer?, _ timeoutMilliseconds: Int32) -> UnsafeMutablePointer<CChar>? {
    guard let bridge = bridge(from: handle) else { return cString(BridgeDocument.closed) }
    let timeout: Duration? = timeoutMilliseconds < 0 ? nil : .milliseconds(timeoutMilliseconds)
    // Already on the host's thread: wait here, with no task in between.
    return bridge.receiveBlocking(timeout: timeout).flatMap(cString)
}

/// `switchboard_free_string`: releases a string the library returned.
@_cdecl("switchboard_free_string")
public func switchboard_free_string(_ string: UnsafeMutablePointer<CChar>?) {
    free(string)
}

/// `switchboard_close`: closes the bridge and its connections, then releases it.
@_cdecl("switchboard_close")
public func switchboard_close(_ handle: OpaquePointer?) {
    guard let handle else { return }
    let unmanaged = Unmanaged<StringBridge>.fromOpaque(UnsafeRawPointer(handle))
    let bridge = unmanaged.takeUnretainedValue()
    blocking { await bridge.close() }
    unmanaged.release()
}
