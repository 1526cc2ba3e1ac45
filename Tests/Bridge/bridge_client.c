/*
 * Drives the string bridge through its C ABI against `switchboard mock-server`, as a
 * foreign core would: calls, typed errors, pushes in order, and concurrent calls from
 * several threads. Every returned string is freed (valgrind checks it).
 *
 * usage: bridge_client <mock-server ws:// URL> <schema directory>
 * Set BRIDGE_LEAK_ONE=1 to leak one answer on purpose (proves the memory check can fail).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "switchboard.h"

static int failures = 0;

/* Checks that `document` contains `fragment`, then frees it. */
static void expect(char *document, const char *fragment, const char *what) {
    if (document == NULL || strstr(document, fragment) == NULL) {
        fprintf(stderr, "FAIL %s: expected %s in %s\n", what, fragment, document ? document : "(null)");
        failures++;
    } else {
        printf("  ok   %s\n", what);
    }
    switchboard_free_string(document);
}

#define THREADS 8
#define CALLS_PER_THREAD 25

struct worker { switchboard_bridge *bridge; int index; int failures; };

static void *work(void *argument) {
    struct worker *worker = argument;
    for (int call = 0; call < CALLS_PER_THREAD; call++) {
        char path[64];
        /* Each thread asks for its own profile version; the mock answers each alike. */
        snprintf(path, sizeof path, "/v1/profile/user%d/v%d", worker->index, call);
        char *answer = switchboard_send_request(worker->bridge, "GET", path, NULL, NULL);
        if (answer == NULL || strstr(answer, "\"type\":\"success\"") == NULL || strstr(answer, "\"name\":\"QWRh\"") == NULL) {
            fprintf(stderr, "FAIL thread %d call %d: %s\n", worker->index, call, answer ? answer : "(null)");
            worker->failures++;
        }
        switchboard_free_string(answer);
    }
    return NULL;
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: %s <ws url> <schema dir>\n", argv[0]);
        return 2;
    }
    /* The header and the library agree on the ABI they speak. */
    char expected_abi[32];
    snprintf(expected_abi, sizeof expected_abi, "(abi %d)", SWITCHBOARD_ABI_VERSION);
    if (strstr(switchboard_version(), expected_abi) == NULL) {
        fprintf(stderr, "FAIL the library's version %s is not %s\n", switchboard_version(), expected_abi);
        return 1;
    }
    char config[1024];
    snprintf(config, sizeof config,
             "{\"schema\": \"%s\", \"url\": \"%s\", \"credentials\": \"ada.1:secret\", \"requestTimeoutMs\": 10000}",
             argv[2], argv[1]);

    char *error = NULL;
    switchboard_bridge *broken = switchboard_open("{\"schema\": \"/nonexistent\", \"url\": \"ws://127.0.0.1:1\"}", &error);
    if (broken != NULL) { fprintf(stderr, "FAIL a bad configuration opened\n"); failures++; }
    expect(error, "\"status\":400,\"error\":\"badConfiguration\"", "a configuration that cannot open gives a badConfiguration error document");

    switchboard_bridge *bridge = switchboard_open(config, &error);
    if (bridge == NULL) {
        fprintf(stderr, "FAIL open: %s\n", error ? error : "(null)");
        switchboard_free_string(error);
        return 1;
    }
    printf("  ok   opened the bridge\n");

    expect(switchboard_send_request(bridge, "GET", "/v1/accounts/username_hash/-_8", NULL, NULL),
           "{\"type\":\"success\",\"status\":200,\"result\":{\"uuid\":\"aci-ada\"}}", "a call answers with its typed result");
    expect(switchboard_send_request(bridge, "GET", "/v1/accounts/username_hash/-_8", "", ""),
           "\"type\":\"nonSuccess\",\"status\":404,\"error\":\"notFound\"", "a declared error is a nonSuccess document");
    expect(switchboard_send_command(bridge, "GET /v1/accounts/username_hash/-_8"),
           "\"error\":\"rateLimited\",\"retryAfterMs\":5000", "the one-string form, and a declared error's delay");
    expect(switchboard_send_command(bridge, "PUT /v1/profile {\"version\": \"v2\", \"name\": \"QWRh\"}"),
           "\"type\":\"success\",\"status\":200", "a PUT with a JSON body");
    expect(switchboard_send_request(bridge, "GET", "/v9/nowhere", NULL, NULL),
           "\"status\":404,\"error\":\"unknownPath\"", "an unknown path is an error document");
    expect(switchboard_send_request(bridge, "PUT", "/v1/profile", NULL, "{\"version\": "),
           "\"status\":400,\"error\":\"badJSON\"", "bad JSON is an error document");
    expect(switchboard_send_request(bridge, "PUT", "/v1/profile", NULL, "{\"nickname\": \"x\"}"),
           "\"status\":422,\"error\":\"schemaViolation\"", "a field the schema lacks is a schema violation");
    expect(switchboard_send_request(bridge, NULL, "/v1/profile", NULL, NULL),
           "\"error\":\"badCommand\"", "a NULL verb is an error document, not a crash");
    expect(switchboard_send_command(bridge, "nonsense"), "\"error\":\"badCommand\"", "a malformed command");

    /* The scripted pushes, in order, then queue empty; each taken acknowledges it. */
    const char *senders[] = {"\"sourceServiceId\":\"first\"", "\"sourceServiceId\":\"second\"", "\"sourceServiceId\":\"third\""};
    for (int i = 0; i < 3; i++) {
        expect(switchboard_receive_message(bridge, 10000), senders[i], "a pushed message arrives in order");
    }
    expect(switchboard_receive_message(bridge, 10000), "\"event\":\"queueEmpty\"", "queue empty follows the messages");
    char *nothing = switchboard_receive_message(bridge, 100);
    if (nothing != NULL) { fprintf(stderr, "FAIL expected a timeout, got %s\n", nothing); failures++; }
    else printf("  ok   receive times out with NULL\n");
    switchboard_free_string(nothing);

    pthread_t threads[THREADS];
    struct worker workers[THREADS];
    for (int i = 0; i < THREADS; i++) {
        workers[i] = (struct worker){bridge, i, 0};
        pthread_create(&threads[i], NULL, work, &workers[i]);
    }
    int threadFailures = 0;
    for (int i = 0; i < THREADS; i++) {
        pthread_join(threads[i], NULL);
        threadFailures += workers[i].failures;
    }
    if (threadFailures) failures += threadFailures;
    else printf("  ok   %d threads made %d calls each, each with its own answer\n", THREADS, CALLS_PER_THREAD);

    if (getenv("BRIDGE_LEAK_ONE")) {
        char *leaked = switchboard_send_request(bridge, "GET", "/v9/leak", NULL, NULL);
        printf("  leaking an answer of %zu bytes on purpose\n", leaked ? strlen(leaked) : 0);
    }

    switchboard_close(bridge);
    printf("  ok   closed\n");
    printf(failures ? "bridge client: %d failed\n" : "bridge client: all passed\n", failures);
    return failures ? 1 : 0;
}
