/* push_client.c - the push thread: a bounded queue, libcurl, retries
 * (push_client.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "push_client.h"

#include <curl/curl.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BACKOFF_FIRST_S 0.5
#define BACKOFF_MAX_S 30.0

struct push_req {
	char *url, *body;
	size_t len;
};

struct push_client {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t wake;           /* CLOCK_MONOTONIC */
	struct push_req queue[PUSH_QUEUE_MAX]; /* ring: head, count */
	size_t head, count;
	bool busy;                     /* the thread holds a request */
	bool closing, abort;           /* finish asked; its wait is over */
	struct snap_push st;           /* under lock */
	unsigned seed;                 /* jitter, the thread's own */
};

static double mono_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static struct timespec abs_time(double t)
{
	struct timespec ts;

	ts.tv_sec = (time_t)t;
	ts.tv_nsec = (long)((t - (double)ts.tv_sec) * 1e9);
	return ts;
}

static void req_free(struct push_req *r)
{
	free(r->url);
	free(r->body);
	memset(r, 0, sizeof *r);
}

/* The header has little room: a few words for the usual failures. */
static const char *short_error(CURLcode rc)
{
	switch (rc) {
	case CURLE_COULDNT_CONNECT: return "connection refused";
	case CURLE_COULDNT_RESOLVE_HOST: return "host not found";
	case CURLE_OPERATION_TIMEDOUT: return "timed out";
	case CURLE_SSL_CONNECT_ERROR:
	case CURLE_PEER_FAILED_VERIFICATION: return "TLS error";
	case CURLE_ABORTED_BY_CALLBACK: return "cut off at exit";
	default: return curl_easy_strerror(rc);
	}
}

/* Cuts a transfer off once finish's wait is over. */
static int on_progress(void *ctx, curl_off_t dt, curl_off_t dn, curl_off_t ut,
                       curl_off_t un)
{
	struct push_client *c = ctx;
	bool abort;

	(void)dt; (void)dn; (void)ut; (void)un;
	pthread_mutex_lock(&c->lock);
	abort = c->abort;
	pthread_mutex_unlock(&c->lock);
	return abort;
}

/* The server's answer body is not needed. */
static size_t discard(char *p, size_t size, size_t n, void *ctx)
{
	(void)p; (void)ctx;
	return size * n;
}

/* One POST.  Returns 1 sent, 0 retry, -1 give up; why in err. */
static int post_once(struct push_client *c, CURL *h, const struct push_req *r,
                     char *err, size_t errlen)
{
	struct curl_slist *hdr = curl_slist_append(NULL, "Content-Type: application/octet-stream");
	long status = 0;
	CURLcode rc;

	curl_easy_reset(h);
	curl_easy_setopt(h, CURLOPT_URL, r->url);
	curl_easy_setopt(h, CURLOPT_POST, 1L);
	curl_easy_setopt(h, CURLOPT_POSTFIELDS, r->body);
	curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)r->len);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
	curl_easy_setopt(h, CURLOPT_USERAGENT, "pytop/" PACKAGE_VERSION);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, (long)PUSH_CONNECT_TIMEOUT_S);
	curl_easy_setopt(h, CURLOPT_TIMEOUT, (long)PUSH_TOTAL_TIMEOUT_S);
	curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl_easy_setopt(h, CURLOPT_XFERINFODATA, c);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, discard);
	rc = hdr != NULL ? curl_easy_perform(h) : CURLE_OUT_OF_MEMORY;
	curl_slist_free_all(hdr);
	if (rc != CURLE_OK) {
		snprintf(err, errlen, "%s", short_error(rc));
		return 0;
	}
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
	if (status >= 200 && status < 300)
		return 1;
	snprintf(err, errlen, "HTTP %ld", status);
	return status == 429 || status >= 500 ? 0 : -1;
}

/* The next request, waiting for one; false when closing and none left. */
static bool take_next(struct push_client *c, struct push_req *r)
{
	pthread_mutex_lock(&c->lock);
	while (c->count == 0 && !c->closing)
		pthread_cond_wait(&c->wake, &c->lock);
	if (c->count == 0 || c->abort) {
		pthread_mutex_unlock(&c->lock);
		return false;
	}
	*r = c->queue[c->head];
	c->head = (c->head + 1) % PUSH_QUEUE_MAX;
	c->count--;
	c->busy = true;
	pthread_mutex_unlock(&c->lock);
	return true;
}

/* Sleep the backoff before try n (1 = the first retry), with jitter
 * (half to one and a half times), unless finish's wait ends first.
 * Called with the lock held. */
static void backoff(struct push_client *c, unsigned n)
{
	double d = BACKOFF_FIRST_S;
	struct timespec until;

	for (unsigned i = 1; i < n && d < BACKOFF_MAX_S; i++)
		d *= 2;
	if (d > BACKOFF_MAX_S)
		d = BACKOFF_MAX_S;
	d *= 0.5 + (double)rand_r(&c->seed) / ((double)RAND_MAX + 1.0);
	until = abs_time(mono_now() + d);
	while (!c->abort &&
	       pthread_cond_timedwait(&c->wake, &c->lock, &until) != ETIMEDOUT)
		;
}

static void send_with_retries(struct push_client *c, CURL *h, struct push_req *r)
{
	char err[sizeof c->st.last_error];
	int res = 0;

	for (unsigned tries = 1; tries <= PUSH_MAX_TRIES; tries++) {
		res = post_once(c, h, r, err, sizeof err);
		pthread_mutex_lock(&c->lock);
		if (res > 0) {
			c->st.sent++;
			c->st.failing_tries = 0;
			c->st.last_ok_unix = (int64_t)time(NULL);
		} else {
			c->st.failing_tries++;
			snprintf(c->st.last_error, sizeof c->st.last_error, "%s", err);
			if (res < 0 || tries == PUSH_MAX_TRIES || c->abort)
				c->st.failed++;
			else
				backoff(c, tries);
		}
		bool stop = res != 0 || c->abort || tries == PUSH_MAX_TRIES;
		if (stop)
			c->busy = false;
		pthread_mutex_unlock(&c->lock);
		if (stop)
			break;
	}
	req_free(r);
}

static void *push_thread(void *arg)
{
	struct push_client *c = arg;
	CURL *h = curl_easy_init();
	struct push_req r;

	while (take_next(c, &r)) {
		if (h == NULL) {
			pthread_mutex_lock(&c->lock);
			c->st.failed++;
			c->busy = false;
			snprintf(c->st.last_error, sizeof c->st.last_error, "no memory");
			pthread_mutex_unlock(&c->lock);
			req_free(&r);
			continue;
		}
		send_with_retries(c, h, &r);
		pthread_mutex_lock(&c->lock);
		pthread_cond_broadcast(&c->wake); /* finish may be waiting */
		pthread_mutex_unlock(&c->lock);
	}
	curl_easy_cleanup(h);
	return NULL;
}

struct push_client *push_client_start(char *err, size_t errlen)
{
	struct push_client *c = calloc(1, sizeof *c);
	pthread_condattr_t ca;
	int rc;

	if (c == NULL) {
		snprintf(err, errlen, "no memory for --push; free some and retry");
		return NULL;
	}
	/* Not thread-safe: called here, before the thread, once. */
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != 0) {
		snprintf(err, errlen, "libcurl could not start (--push); check its "
		         "TLS library is installed");
		free(c);
		return NULL;
	}
	c->st.on = true;
	c->seed = (unsigned)time(NULL) ^ (unsigned)(uintptr_t)c;
	pthread_mutex_init(&c->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&c->wake, &ca);
	pthread_condattr_destroy(&ca);
	rc = pthread_create(&c->thread, NULL, push_thread, c);
	if (rc != 0) {
		snprintf(err, errlen, "could not start the push thread: %s",
		         strerror(rc));
		pthread_cond_destroy(&c->wake);
		pthread_mutex_destroy(&c->lock);
		curl_global_cleanup();
		free(c);
		return NULL;
	}
	return c;
}

bool push_client_enqueue(struct push_client *c, char *url, char *body,
                         size_t len)
{
	struct push_req r = { url, body, len };
	bool queued = false;

	pthread_mutex_lock(&c->lock);
	if (url != NULL && body != NULL && c->count < PUSH_QUEUE_MAX && !c->closing) {
		c->queue[(c->head + c->count) % PUSH_QUEUE_MAX] = r;
		c->count++;
		queued = true;
		pthread_cond_broadcast(&c->wake);
	} else {
		c->st.dropped++;
	}
	pthread_mutex_unlock(&c->lock);
	if (!queued)
		req_free(&r);
	return queued;
}

void push_client_status(struct push_client *c, struct snap_push *out)
{
	pthread_mutex_lock(&c->lock);
	*out = c->st;
	pthread_mutex_unlock(&c->lock);
}

size_t push_client_finish(struct push_client *c, double timeout_s)
{
	struct timespec until = abs_time(mono_now() + timeout_s);
	size_t left;

	pthread_mutex_lock(&c->lock);
	c->closing = true;
	pthread_cond_broadcast(&c->wake);
	while ((c->count > 0 || c->busy) &&
	       pthread_cond_timedwait(&c->wake, &c->lock, &until) != ETIMEDOUT)
		;
	left = c->count + (c->busy ? 1 : 0);
	c->abort = true;
	pthread_cond_broadcast(&c->wake);
	pthread_mutex_unlock(&c->lock);
	pthread_join(c->thread, NULL);
	for (size_t i = 0; i < c->count; i++)
		req_free(&c->queue[(c->head + i) % PUSH_QUEUE_MAX]);
	pthread_cond_destroy(&c->wake);
	pthread_mutex_destroy(&c->lock);
	curl_global_cleanup();
	free(c);
	return left;
}
