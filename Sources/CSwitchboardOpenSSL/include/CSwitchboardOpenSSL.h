// A thin shim over the system OpenSSL (Debian libssl-dev) for SwitchboardWebSocket on Linux.
// Swift imports functions but not OpenSSL's function-like macros; these wrap the few we need.
#ifndef CSWITCHBOARD_OPENSSL_H
#define CSWITCHBOARD_OPENSSL_H

// Linux only: Apple platforms use Network.framework and have no OpenSSL headers, so the
// shim compiles to nothing there if `swift build` builds every target.
#if defined(__linux__)

#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/x509v3.h>

/// Creates a client context: TLS 1.2 or later, peer verification on.
SSL_CTX *sb_client_context(void);
/// Creates a server context from PEM files; NULL on failure.
/* NULL on failure, with OpenSSL's reason in `error`. */
SSL_CTX *sb_server_context(const char *certificate_chain_path, const char *private_key_path, char *error, size_t error_length);
/// Trusts the system store (/etc/ssl/certs).
int sb_trust_system_store(SSL_CTX *context);
/// Trusts the certificates in a PEM string instead; returns how many were added.
int sb_trust_pem(SSL_CTX *context, const char *pem, int length);
/// Sends SNI and checks the certificate against `host` (a DNS name or an IP literal).
int sb_set_server_name(SSL *ssl, const char *host, int is_ip_address);
/// Offers the ALPN protocols in `wire` (length-prefixed names, RFC 7301).
int sb_offer_alpn(SSL *ssl, const unsigned char *wire, unsigned int length);
/// The ALPN protocol both sides agreed on (not NUL-terminated), or NULL; `length` gets its length.
const unsigned char *sb_selected_alpn(SSL *ssl, unsigned int *length);
/// Makes a server context answer ALPN, each session as `sb_session_allow_h2` says.
void sb_server_alpn(SSL_CTX *context);
/// Lets one server session choose "h2" first (else only "http/1.1"); 1 on success.
int sb_session_allow_h2(SSL *ssl, int allow_h2);
/// Why verification failed, or NULL when it passed.
const char *sb_verify_error(SSL *ssl);
/// The oldest queued OpenSSL error as text; clears the queue.
void sb_last_error(char *buffer, size_t length);
/// The SNI name the client sent (server side), or NULL.
const char *sb_requested_server_name(SSL *ssl);
/// Gives `ssl` two memory BIOs instead of a socket, so an event loop moves its bytes:
/// ciphertext read from the network goes in with sb_feed, ciphertext to send comes out
/// with sb_drain. Returns 1 on success.
int sb_use_memory_bios(SSL *ssl);
/// Hands ciphertext read from the network to `ssl`; returns how many bytes it took.
int sb_feed(SSL *ssl, const void *bytes, int length);
/// How many bytes of ciphertext wait to be sent.
size_t sb_pending_output(SSL *ssl);
/// Moves up to `length` bytes of ciphertext to send into `buffer`; returns how many.
int sb_drain(SSL *ssl, void *buffer, int length);

#endif // __linux__
#endif
