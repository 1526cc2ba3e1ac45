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
#define CALLS (THREADS * CALLS_PER_THREAD)

/* What each call was answered with: Tests/Bridge/responses.json scripts CALLS profiles,
 * versions "n0" to "n<CALLS-1>", served one to each request in turn (the last repeating).
 * -1 for an answer without one. */
static int served[CALLS];

struct worker { switchboard_bridge *bridge; int index; int failures; };

/* The N of a success answer's `"version":"nN"`, or -1. */
static int served_number(const char *answer) {
    static const char key[] = "\"version\":\"n";
    const char *at = answer ? strstr(answer, key) : NULL;
    if (answer == NULL || strstr(answer, "\"type\":\"success\"") == NULL || at == NULL) return -1;
    char *end = NULL;
    long number = strtol(at + strlen(key), &end, 10);
    if (end == at + strlen(key) || *end != '"' || number < 0 || number >= CALLS) return -1;
    return (int)number;
}

static void *work(void *argument) {
    struct worker *worker = argument;
    for (int call = 0; call < CALLS_PER_THREAD; call++) {
        char path[64];
        snprintf(path, sizeof path, "/v1/profile/user%d/v%d", worker->index, call);
        char *answer = switchboard_send_request(worker->bridge, "GET", path, NULL, NULL);
        int number = served_number(answer);
        served[worker->index * CALLS_PER_THREAD + call] = number;
        if (number < 0 || strstr(answer, "\"name\":\"QWRh\"") == NULL) {
            fprintf(stderr, "FAIL thread %d call %d: %s\n", worker->index, call, answer ? answer : "(null)");
            worker->failures++;
        } else if (call > 0 && number <= served[worker->index * CALLS_PER_THREAD + call - 1]) {
            /* A thread's calls follow one another, so the server serves them in order. */
            fprintf(stderr, "FAIL thread %d call %d: answer n%d after n%d\n", worker->index, call, number,
                    served[worker->index * CALLS_PER_THREAD + call - 1]);
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
    else printf("  ok   %d threads made %d calls each, each answered in its thread's order\n", THREADS, CALLS_PER_THREAD);
    /* Every scripted answer reached exactly one call: none lost, none duplicated. */
    int times[CALLS] = {0};
    for (int i = 0; i < CALLS; i++) if (served[i] >= 0) times[served[i]]++;
    int wrong = 0;
    for (int n = 0; n < CALLS; n++) {
        if (times[n] != 1) {
            if (wrong < 10) fprintf(stderr, "FAIL answer n%d reached %d calls, not 1\n", n, times[n]);
            wrong++;
        }
    }
    if (wrong) failures++;
    else printf("  ok   the %d concurrent calls received answers n0 to n%d, each exactly once\n", CALLS, CALLS - 1);

    if (getenv("BRIDGE_LEAK_ONE")) {
        char *leaked = switchboard_send_request(bridge, "GET", "/v9/leak", NULL, NULL);
        printf("  leaking an answer of %zu bytes on purpose\n", leaked ? strlen(leaked) : 0);
    }

    switchboard_close(bridge);
    printf("  ok   closed\n");
    printf(failures ? "bridge client: %d failed\n" : "bridge client: all passed\n", failures);
    return failures ? 1 : 0;
}
