/* push_url.c - --push's URL, checked, and each period's ingest URL
 * (push_url.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "push_url.h"

#include <curl/curl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* What curl_url said, as a fix the user can act on. */
static int url_error(const char *url, const char *why, char *err, size_t errlen)
{
	snprintf(err, errlen, "invalid --push URL '%s': %s; give the server's "
	         "address as http://HOST:PORT or https://HOST:PORT (e.g. "
	         "http://localhost:4040)", url, why);
	return -1;
}

static bool has_part(CURLU *u, CURLUPart part)
{
	char *v = NULL;
	bool has = curl_url_get(u, part, &v, 0) == CURLUE_OK && v != NULL && v[0] != '\0';

	curl_free(v);
	return has;
}

/* u's path with "/ingest" after it (a trailing '/' dropped). */
static int set_ingest_path(CURLU *u)
{
	char *path = NULL, *with;
	size_t n;
	int rc = -1;

	if (curl_url_get(u, CURLUPART_PATH, &path, 0) != CURLUE_OK)
		return -1;
	n = strlen(path);
	while (n > 0 && path[n - 1] == '/')
		n--;
	with = malloc(n + sizeof "/ingest");
	if (with != NULL) {
		memcpy(with, path, n);
		memcpy(with + n, "/ingest", sizeof "/ingest");
		rc = curl_url_set(u, CURLUPART_PATH, with, 0) == CURLUE_OK ? 0 : -1;
	}
	free(with);
	curl_free(path);
	return rc;
}

int push_url_base(const char *url, char *base, size_t size, char *err,
                  size_t errlen)
{
	CURLU *u = curl_url();
	char *scheme = NULL, *full = NULL;
	int rc = -1;

	if (u == NULL)
		return url_error(url, "out of memory", err, errlen);
	if (strstr(url, "://") == NULL)
		url_error(url, "no scheme", err, errlen);
	else if (curl_url_set(u, CURLUPART_URL, url, CURLU_NON_SUPPORT_SCHEME) != CURLUE_OK)
		url_error(url, "not a URL", err, errlen);
	else if (curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
	         (strcasecmp(scheme, "http") != 0 && strcasecmp(scheme, "https") != 0))
		url_error(url, "only http and https are supported", err, errlen);
	else if (!has_part(u, CURLUPART_HOST))
		url_error(url, "no host", err, errlen);
	else if (has_part(u, CURLUPART_QUERY) || has_part(u, CURLUPART_FRAGMENT))
		url_error(url, "pytop writes the query itself", err, errlen);
	else if (set_ingest_path(u) != 0 ||
	         curl_url_get(u, CURLUPART_URL, &full, 0) != CURLUE_OK)
		url_error(url, "out of memory", err, errlen);
	else if (strlen(full) >= size)
		url_error(url, "too long", err, errlen);
	else {
		memcpy(base, full, strlen(full) + 1);
		rc = 0;
	}
	curl_free(scheme);
	curl_free(full);
	curl_url_cleanup(u);
	return rc;
}

/* Percent-encode s (all but RFC 3986's unreserved characters) onto out. */
static void put_encoded(FILE *out, const char *s)
{
	for (; *s != '\0'; s++) {
		unsigned char c = (unsigned char)*s;

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || strchr("-._~", c) != NULL)
			fputc(c, out);
		else
			fprintf(out, "%%%02X", c);
	}
}

char *push_url_ingest(const char *base, const char *app,
                      const char *const *labels, int nlabels,
                      int64_t from, int64_t until, int rate_hz)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);

	if (out == NULL)
		return NULL;
	fprintf(out, "%s?name=", base);
	put_encoded(out, app);
	if (nlabels > 0) {
		put_encoded(out, "{");
		for (int i = 0; i < nlabels; i++) {
			if (i > 0)
				put_encoded(out, ",");
			put_encoded(out, labels[i]);
		}
		put_encoded(out, "}");
	}
	fprintf(out, "&from=%" PRId64 "&until=%" PRId64
	        "&format=pprof&spyName=pytop&sampleRate=%d", from, until, rate_hz);
	if (fclose(out) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

void push_url_app_of(const char *command, char *app, size_t size)
{
	size_t n = strcspn(command, " "), start = 0, k = 0;

	for (size_t i = 0; i < n; i++)
		if (command[i] == '/')
			start = i + 1;
	for (size_t i = start; i < n && k + 1 < size; i++) {
		unsigned char c = (unsigned char)command[i];
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		          (c >= '0' && c <= '9') || strchr("_.-", c) != NULL;

		app[k++] = ok ? (char)c : '_';
	}
	if (k == 0 && size > sizeof "pytop")
		k = (size_t)snprintf(app, size, "pytop");
	if (size > 0)
		app[k < size ? k : size - 1] = '\0';
}
