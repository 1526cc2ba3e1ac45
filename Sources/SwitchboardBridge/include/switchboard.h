/*
 * Switchboard's string bridge: a schema's whole API behind seven C functions, for an app
 * core written in another language (C, Kotlin through JNI, Python through ctypes, ...).
 *
 * Requests are REST-style (verb, path, query, JSON body) and answer with a JSON document
 * whose "type" is "success", "nonSuccess", "failure" or "error" (see docs/bridge.md).
 * Pushed events wait in an ordered queue for switchboard_receive_message.
 *
 * Every char * the library returns is a NUL-terminated UTF-8 string the caller owns and
 * must release with switchboard_free_string. Strings passed in must be UTF-8; the library
 * reads no further than a request's limits (the body's maxRequestBytes plus maxRequestHeadBytes,
 * 64 KiB by default, for the rest), so a longer string is refused with a "tooLarge" error, not copied. Every function may be called from any
 * thread, and from several threads at once; each call blocks its thread until it has an
 * answer. Call them from threads the host owns, not from inside Swift concurrency (from a
 * Swift task they answer an error document instead of blocking; close finishes in the
 * background).
 *
 * A function that returns char * returns NULL only where it says so, or when the process is
 * out of memory.
 */
#ifndef SWITCHBOARD_H
#define SWITCHBOARD_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The version of the functions below: changes when any of them changes incompatibly. */
#define SWITCHBOARD_ABI_VERSION 1

/*
 * The library's version, such as "0.1.0 (abi 1)": a static string, not to be freed. A core
 * that loads the library at run time checks it against SWITCHBOARD_ABI_VERSION.
 */
const char *switchboard_version(void);

/* An open bridge: a schema and the connections its requests go through. */
typedef struct switchboard_bridge switchboard_bridge;

/*
 * Opens a bridge from a JSON configuration:
 *   {"schema": "path/to/schema",                 required: the directory of *.sb files
 *    "importPaths": ["path/to/other=Module"],    optional: schemas the schema imports
 *    "transport": "websocket",                   or "grpc"
 *    "url": "ws://127.0.0.1:8080",               ws(s):// for websocket, http(s):// for grpc
 *    "credentials": "user.1:password",           optional: opens the authenticated connection too
 *    "connectTimeoutMs": 10000, "requestTimeoutMs": 30000,
 *    "maxRequestBytes": 1048576, "maxRequestHeadBytes": 65536,
 *    "maxHeaderLines": 100, "maxQueuedEvents": 1000,
 *    "maxQueuedEventBytes": 67108864}
 * Returns NULL on failure and, if error is not NULL, sets *error to a JSON error document
 * the caller frees with switchboard_free_string.
 */
switchboard_bridge *switchboard_open(const char *config_json, char **error);

/*
 * Sends one request and waits for its answer document. query may be NULL or "" (a "?" in
 * path starts the query too); body is JSON, or NULL or "" for none.
 */
char *switchboard_send_request(switchboard_bridge *bridge, const char *verb, const char *path,
                               const char *query, const char *body);

/*
 * The one-string form, tagged by its verb as an HTTP/1.1 request:
 *   "GET /v1/chats?limit=20"
 *   "PUT /v1/messages/alice {\"messages\": []}"
 *   "GET /v2/keys/alice/1\nUnidentified-Access-Key: AAAA\n\n"   (header lines carry keys)
 */
char *switchboard_send_command(switchboard_bridge *bridge, const char *command);

/*
 * The next pushed event document, waiting at most timeout_ms milliseconds (negative: until
 * one arrives). Returns NULL when the time runs out, and {"type":"closed"} once the bridge
 * is closed. An event the schema acknowledges after handling is acknowledged when this
 * call hands it over.
 */
char *switchboard_receive_message(switchboard_bridge *bridge, int32_t timeout_ms);

/* Releases a string the library returned; NULL is ignored. */
void switchboard_free_string(char *string);

/*
 * Closes the bridge and its connections: waiting receives return {"type":"closed"}, later
 * requests answer with a "closed" error. A handle is a number, not a pointer: using it after
 * this returns, or closing it again (from any thread), is harmless and answers "closed".
 */
void switchboard_close(switchboard_bridge *bridge);

#ifdef __cplusplus
}
#endif

#endif /* SWITCHBOARD_H */
