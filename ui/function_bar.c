/* function_bar.c - draw the key legend. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "function_bar.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "text.h"

#define LABEL_COLS 6 /* labels are padded so the keys line up like htop's */

static bool is_fkey(const char *key)
{
	return key[0] == 'F' && isdigit((unsigned char)key[1]);
}

void function_bar_draw(const struct crt *crt, int y,
                       const struct legend_item *items, size_t n)
{
	int x = 0;

	crt_fill(crt, y, 0, CRT_LABEL);
	for (size_t i = 0; i < n && x < COLS; i++) {
		char key[16], label[32];

		/* Only F-keys run into their label, as in htop ("F1Help");
		 * others get a blank: "l Lines", "Enter Funcs". */
		snprintf(key, sizeof key, "%s%s", items[i].key,
		         is_fkey(items[i].key) ? "" : " ");
		/* At least one blank after each label, even a long one. */
		snprintf(label, sizeof label, "%-*s ", LABEL_COLS - 1,
		         items[i].label);
		crt_put(crt, y, x, CRT_KEY, key);
		x += text_width(key, crt->utf8);
		crt_put(crt, y, x, CRT_LABEL, label);
		x += text_width(label, crt->utf8);
	}
}
