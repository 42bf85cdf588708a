/* function_bar.h - the bottom-row key legend, htop style: each key,
 * then its label on a bar. */
#ifndef PYTOP_UI_FUNCTION_BAR_H
#define PYTOP_UI_FUNCTION_BAR_H

#include <stddef.h>

#include "crt.h"
#include "keys.h"

void function_bar_draw(const struct crt *crt, int y,
                       const struct legend_item *items, size_t n);

#endif
