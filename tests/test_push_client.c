/* test_push_client.c - the push thread's policy against a server in this
 * test: a 4xx gives a period up at once (one try, counted failed), a 429
 * is retried, and a full queue drops and counts rather than block. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "../ui/push_client.h"

/* A one-thread HTTP server answering every request with the next of
 * `statuses` (the last one repeated), counting the requests. */
struct server {
	int fd, port;
	const int *statuses;
	size_t nstatuses;
	atomic_int requests;
	atomic_bool stop;
	pthread_t thread;
};

/* Read the request: headers, then Content-Length bytes of body. */
static void read_request(int c)
{
	char buf[8192];
	size_t have = 0;
	long body = -1;
	char *end = NULL;

	while (have < sizeof buf - 1) {
		ssize_t n = read(c, buf + have, sizeof buf - 1 - have);

		if (n <= 0)
			return;
		have += (size_t)n;
		buf[have] = '\0';
		if (end == NULL && (end = strstr(buf, "\r\n\r\n")) != NULL) {
			char *cl = strcasestr(buf, "Content-Length:");

			body = cl ? strtol(cl + 15, NULL, 10) : 0;
		}
		if (end != NULL && (long)(have - (size_t)(end + 4 - buf)) >= body)
			return;
	}
}

static void *serve(void *arg)
{
	struct server *s = arg;

	while (!atomic_load(&s->stop)) {
		int c = accept(s->fd, NULL, NULL), n;
		char reply[128];
		int status;

		if (c < 0)
			continue;
		read_request(c);
		n = atomic_fetch_add(&s->requests, 1);
		status = s->statuses[(size_t)n < s->nstatuses ? (size_t)n : s->nstatuses - 1];
		snprintf(reply, sizeof reply, "HTTP/1.1 %d X\r\nContent-Length: 0\r\n"
		         "Connection: close\r\n\r\n", status);
		if (write(c, reply, strlen(reply)) < 0)
			perror("write");
		close(c);
	}
	return NULL;
}

static void server_start(struct server *s, const int *statuses, size_t n)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof a;

	memset(s, 0, sizeof *s);
	s->statuses = statuses;
	s->nstatuses = n;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	s->fd = socket(AF_INET, SOCK_STREAM, 0);
	cr_assert(s->fd >= 0);
	cr_assert_eq(bind(s->fd, (struct sockaddr *)&a, sizeof a), 0);
	cr_assert_eq(listen(s->fd, 16), 0);
	cr_assert_eq(getsockname(s->fd, (struct sockaddr *)&a, &len), 0);
	s->port = ntohs(a.sin_port);
	cr_assert_eq(pthread_create(&s->thread, NULL, serve, s), 0);
}

static void server_stop(struct server *s)
{
	atomic_store(&s->stop, true);
	shutdown(s->fd, SHUT_RDWR);
	close(s->fd);
	pthread_join(s->thread, NULL);
}

static void enqueue(struct push_client *c, int port, bool *queued)
{
	char *url = NULL;

	cr_assert(asprintf(&url, "http://127.0.0.1:%d/ingest?name=t", port) > 0);
	*queued = push_client_enqueue(c, url, strdup("body"), 4);
}

/* Wait until pred holds for the client's status (at most 10 s). */
static struct snap_push wait_status(struct push_client *c,
                                    bool (*pred)(const struct snap_push *))
{
	struct snap_push st;
	struct timespec nap = { 0, 10000000 };

	for (int i = 0; i < 1000; i++) {
		push_client_status(c, &st);
		if (pred(&st))
			break;
		nanosleep(&nap, NULL);
	}
	return st;
}

static bool settled(const struct snap_push *st)
{
	return st->sent + st->failed > 0;
}

Test(push_client, a_4xx_is_given_up_at_once)
{
	static const int statuses[] = { 400 };
	struct server s;
	struct push_client *c;
	struct snap_push st;
	char err[256];
	bool queued;

	server_start(&s, statuses, 1);
	c = push_client_start(err, sizeof err);
	cr_assert_not_null(c, "%s", err);
	enqueue(c, s.port, &queued);
	cr_assert(queued);
	st = wait_status(c, settled);
	/* Time for a retry, were there one (the first comes after 0.25-0.75 s). */
	usleep(1000000);
	push_client_status(c, &st);
	cr_expect_eq(st.failed, 1);
	cr_expect_eq(st.sent, 0);
	cr_expect_eq(atomic_load(&s.requests), 1, "a 400 was tried %d times",
	             atomic_load(&s.requests));
	cr_expect_str_eq(st.last_error, "HTTP 400");
	cr_expect_eq(push_client_finish(c, 1), 0);
	server_stop(&s);
}

Test(push_client, a_429_is_retried)
{
	static const int statuses[] = { 429, 200 };
	struct server s;
	struct push_client *c;
	struct snap_push st;
	char err[256];
	bool queued;

	server_start(&s, statuses, 2);
	c = push_client_start(err, sizeof err);
	cr_assert_not_null(c, "%s", err);
	enqueue(c, s.port, &queued);
	st = wait_status(c, settled);
	cr_expect_eq(st.sent, 1, "429 then 200: sent %d, failed %d",
	             (int)st.sent, (int)st.failed);
	cr_expect_eq(st.failed, 0);
	cr_expect_eq(atomic_load(&s.requests), 2);
	cr_expect_eq(push_client_finish(c, 1), 0);
	server_stop(&s);
}

static bool trying(const struct snap_push *st)
{
	return st->failing_tries > 0;
}

/* While the thread retries one period, 8 more wait; the next is dropped
 * and counted, and enqueueing returns at once. */
Test(push_client, a_full_queue_drops_and_counts)
{
	static const int statuses[] = { 503 };
	struct server s;
	struct push_client *c;
	struct snap_push st;
	char err[256];
	bool queued;
	int accepted = 0;

	server_start(&s, statuses, 1);
	c = push_client_start(err, sizeof err);
	cr_assert_not_null(c, "%s", err);
	enqueue(c, s.port, &queued);
	st = wait_status(c, trying);
	cr_assert_gt(st.failing_tries, 0, "the first period was never tried");
	for (int i = 0; i < PUSH_QUEUE_MAX + 1; i++) {
		enqueue(c, s.port, &queued);
		accepted += queued;
	}
	push_client_status(c, &st);
	cr_expect_eq(accepted, PUSH_QUEUE_MAX);
	cr_expect_eq(st.dropped, 1);
	/* The wait at exit is bounded: all 9 are given up. */
	cr_expect_eq(push_client_finish(c, 0.3), PUSH_QUEUE_MAX + 1);
	server_stop(&s);
}
