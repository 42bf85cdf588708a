/* push_url.h - --push's URL: checked once at start, and the ingest
 * request's URL of each period (Grafana Pyroscope's HTTP ingest API:
 * POST /ingest?name=APP{k=v,...}&from=&until=&format=pprof&spyName=
 * &sampleRate=, from and until in Unix seconds, the query URL-encoded). */
#ifndef PYTOP_UI_PUSH_URL_H
#define PYTOP_UI_PUSH_URL_H

#include <stddef.h>
#include <stdint.h>

/* url must be http:// or https:// with a host, and no query or fragment;
 * base[size] gets it with "/ingest" appended to its path.  0, or -1 with
 * the one-line error (naming the problem and the fix) in err[errlen]. */
int push_url_base(const char *url, char *base, size_t size, char *err,
                  size_t errlen);

/* "BASE?name=APP%7Bk%3Dv%7D&from=F&until=U&format=pprof&spyName=pytop&
 * sampleRate=HZ" (malloc'd; NULL on OOM).  labels[0..n) are "k=v". */
char *push_url_ingest(const char *base, const char *app,
                      const char *const *labels, int nlabels,
                      int64_t from, int64_t until, int rate_hz);

/* The app name a command line gives: its first word's base name, every
 * character a Pyroscope name cannot carry made '_' ("python3" for
 * "/usr/bin/python3 app.py"; "pytop" when empty). */
void push_url_app_of(const char *command, char *app, size_t size);

#endif
