/* push_status.c - --push's health in a few words (push_status.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "push_status.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

void push_status_text(const struct snap_push *p, int64_t now_unix,
                      bool short_form, char *buf, size_t size)
{
	if (!p->on) {
		snprintf(buf, size, "%s", "");
	} else if (p->failing_tries > 0) {
		if (short_form)
			snprintf(buf, size, "push failing");
		else
			snprintf(buf, size, "push failing: %s (%u tr%s)", p->last_error,
			         p->failing_tries, p->failing_tries == 1 ? "y" : "ies");
	} else if (p->last_ok_unix > 0) {
		int64_t ago = now_unix - p->last_ok_unix;

		snprintf(buf, size, "push ok %" PRId64 "s ago", ago > 0 ? ago : 0);
	} else if (p->failed > 0) {
		snprintf(buf, size, "push failed: %s", p->last_error);
	} else {
		snprintf(buf, size, "push pending");
	}
	if (!short_form && p->dropped > 0 && strlen(buf) + 16 < size)
		snprintf(buf + strlen(buf), size - strlen(buf), " %" PRIu64 " dropped",
		         p->dropped);
}
