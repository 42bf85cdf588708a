/* push_status.h - --push's health (snapshot.push) in a few words, for
 * the header: "push ok 3s ago", "push failing: connection refused (4
 * tries)", "push pending". */
#ifndef PYTOP_UI_PUSH_STATUS_H
#define PYTOP_UI_PUSH_STATUS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profile/snapshot.h"

/* p's state as of now_unix; short_form: fewer words still ("push
 * failing").  "" when p is off. */
void push_status_text(const struct snap_push *p, int64_t now_unix,
                      bool short_form, char *buf, size_t size);

#endif
