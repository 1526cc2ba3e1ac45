#include "CSwitchboardOpenSSL.h"

#if defined(__linux__)
#include <stdint.h>
#include <string.h>

SSL_CTX *sb_client_context(void) {
    SSL_CTX *context = SSL_CTX_new(TLS_client_method());
    if (context == NULL) return NULL;
    SSL_CTX_set_min_proto_version(context, TLS1_2_VERSION);
    /* A TLS 1.2 server's HelloRequest would start a renegotiation mid-stream, which the
       engine's record loop does not drive: refuse it. */
    SSL_CTX_set_options(context, SSL_OP_NO_RENEGOTIATION);
    SSL_CTX_set_verify(context, SSL_VERIFY_PEER, NULL);
    return context;
}

/* No passphrase: an encrypted key fails to load. OpenSSL's default callback would prompt
   for one on the terminal, holding a server's start until someone typed it. */
static int sb_no_passphrase(char *buffer, int size, int purpose, void *argument) {
    (void)buffer; (void)size; (void)purpose; (void)argument;
    return 0;
}

SSL_CTX *sb_server_context(const char *certificate_chain_path, const char *private_key_path, char *error, size_t error_length) {
    ERR_clear_error();
    SSL_CTX *context = SSL_CTX_new(TLS_server_method());
    if (context == NULL) {
        sb_last_error(error, error_length);
        return NULL;
    }
    SSL_CTX_set_min_proto_version(context, TLS1_2_VERSION);
    SSL_CTX_set_options(context, SSL_OP_NO_RENEGOTIATION);
    SSL_CTX_set_default_passwd_cb(context, sb_no_passphrase);
    if (SSL_CTX_use_certificate_chain_file(context, certificate_chain_path) != 1
        || SSL_CTX_use_PrivateKey_file(context, private_key_path, SSL_FILETYPE_PEM) != 1
        || SSL_CTX_check_private_key(context) != 1) {
        sb_last_error(error, error_length);
        SSL_CTX_free(context);
        return NULL;
    }
    sb_server_alpn(context);
    return context;
}

int sb_trust_system_store(SSL_CTX *context) {
    return SSL_CTX_set_default_verify_paths(context);
}

int sb_trust_pem(SSL_CTX *context, const char *pem, int length) {
    BIO *bio = BIO_new_mem_buf(pem, length);
    if (bio == NULL) return 0;
    X509_STORE *store = SSL_CTX_get_cert_store(context);
    int added = 0;
    X509 *certificate;
    while ((certificate = PEM_read_bio_X509(bio, NULL, NULL, NULL)) != NULL) {
        if (X509_STORE_add_cert(store, certificate) == 1) added++;
        X509_free(certificate);
    }
    ERR_clear_error(); // the read loop ends with a "no start line" error
    BIO_free(bio);
    return added;
}

int sb_set_server_name(SSL *ssl, const char *host, int is_ip_address) {
    if (is_ip_address) {
        X509_VERIFY_PARAM *parameters = SSL_get0_param(ssl);
        return X509_VERIFY_PARAM_set1_ip_asc(parameters, host);
    }
    if (SSL_set_tlsext_host_name(ssl, host) != 1) return 0;
    /* As RFC 9525 and browsers: names only from the certificate's DNS names, never its
       subject's common name, and a wildcard only as a whole left-most label. */
    SSL_set_hostflags(ssl, X509_CHECK_FLAG_NEVER_CHECK_SUBJECT | X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
    return SSL_set1_host(ssl, host);
}

int sb_offer_alpn(SSL *ssl, const unsigned char *wire, unsigned int length) {
    return SSL_set_alpn_protos(ssl, wire, length) == 0;
}

const unsigned char *sb_selected_alpn(SSL *ssl, unsigned int *length) {
    const unsigned char *protocol = NULL;
    SSL_get0_alpn_selected(ssl, &protocol, length);
    return protocol;
}

// What a session serves: h2 (HTTP/2 and gRPC servers, which speak nothing else) or
// http/1.1 (WebSocket servers).
static const unsigned char sb_h2_only[] = {2, 'h', '2'};
static const unsigned char sb_http11_only[] = {8, 'h', 't', 't', 'p', '/', '1', '.', '1'};

static int sb_select_alpn(SSL *ssl, const unsigned char **out, unsigned char *out_length,
                          const unsigned char *offered, unsigned int offered_length, void *argument) {
    (void)argument;
    // An empty offer is no offer (and SSL_select_next_proto mishandles it in older releases).
    if (offered_length == 0) return SSL_TLSEXT_ERR_NOACK;
    // Per session, not per context: one context may serve a WebSocket server (http/1.1
    // only) and a gRPC server (h2) at once.
    int allow_h2 = (int)(intptr_t)SSL_get_app_data(ssl);
    const unsigned char *ours = allow_h2 ? sb_h2_only : sb_http11_only;
    unsigned int ours_length = allow_h2 ? sizeof(sb_h2_only) : sizeof(sb_http11_only);
    unsigned char *selected = NULL;
    unsigned char selected_length = 0;
    if (SSL_select_next_proto(&selected, &selected_length, ours, ours_length, offered, offered_length) != OPENSSL_NPN_NEGOTIATED) {
        /* Nothing offered is served here: RFC 7301 §3.2 answers no_application_protocol,
           rather than go on in a protocol the client did not offer. */
        return SSL_TLSEXT_ERR_ALERT_FATAL;
    }
    *out = selected;
    *out_length = selected_length;
    return SSL_TLSEXT_ERR_OK;
}

void sb_server_alpn(SSL_CTX *context) {
    SSL_CTX_set_alpn_select_cb(context, sb_select_alpn, NULL);
}

int sb_session_allow_h2(SSL *ssl, int allow_h2) {
    return SSL_set_app_data(ssl, (void *)(intptr_t)allow_h2);
}

const char *sb_verify_error(SSL *ssl) {
    long result = SSL_get_verify_result(ssl);
    if (result == X509_V_OK) return NULL;
    return X509_verify_cert_error_string(result);
}

void sb_last_error(char *buffer, size_t length) {
    unsigned long code = ERR_get_error();
    if (code == 0) {
        strncpy(buffer, "unknown TLS error", length);
        buffer[length - 1] = 0;
    } else {
        ERR_error_string_n(code, buffer, length);
    }
    ERR_clear_error();
}

const char *sb_requested_server_name(SSL *ssl) {
    return SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name);
}

int sb_use_memory_bios(SSL *ssl) {
    BIO *input = BIO_new(BIO_s_mem());
    BIO *output = BIO_new(BIO_s_mem());
    if (input == NULL || output == NULL) {
        BIO_free(input);
        BIO_free(output);
        return 0;
    }
    // An empty memory BIO reports "retry" rather than end of file, so SSL_read says
    // WANT_READ until more ciphertext is fed.
    BIO_set_mem_eof_return(input, -1);
    BIO_set_mem_eof_return(output, -1);
    SSL_set_bio(ssl, input, output);
    return 1;
}

int sb_feed(SSL *ssl, const void *bytes, int length) {
    return BIO_write(SSL_get_rbio(ssl), bytes, length);
}

size_t sb_pending_output(SSL *ssl) {
    return BIO_ctrl_pending(SSL_get_wbio(ssl));
}

int sb_drain(SSL *ssl, void *buffer, int length) {
    return BIO_read(SSL_get_wbio(ssl), buffer, length);
}

#endif // __linux__
